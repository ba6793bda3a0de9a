// The README's TypeScript is real: every ```ts block of README.md is
// type-checked with `tsc --strict` against index.d.ts (and the pinned
// @types/vscode) in a temporary app that has this package as
// `node_modules/ahp-mcp-host` (helpers/typecheck.mjs; the guides' blocks,
// docs/guide/*.md, are checked the same way by guides.test.mjs); the
// "Quick start" blocks are then transpiled with the repository's TypeScript
// and run with Node against the MCP reference server
// (@modelcontextprotocol/server-everything, a devDependency). The only
// change made before running: the `npx -y @modelcontextprotocol/server-everything`
// command of the README becomes `node <its installed entry> stdio` (no
// registry at test time). A quick start that lists tools before the server
// is ready prints no tools and its callTool fails `not_found`: this test
// fails then.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { ROOT, EVERYTHING } from './helpers/host.mjs'
import { tsBlocksOf, makeApp, run, assertTypeChecks } from './helpers/typecheck.mjs'

const require = createRequire(import.meta.url)
const ts = require('typescript')

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const NPX_EVERYTHING = "{ type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] }"
const LOCAL_EVERYTHING = `{ type: 'stdio', command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(EVERYTHING)}, 'stdio'] }`

/** The fenced ```ts blocks of README section `## <title>`. */
function tsBlocks(title) {
  const start = README.indexOf(`\n## ${title}\n`)
  assert.ok(start >= 0, `README has no "## ${title}" section`)
  const end = README.indexOf('\n## ', start + 1)
  return tsBlocksOf(README.slice(start + 1, end < 0 ? undefined : end))
}

const quick = tsBlocks('Quick start')

test('the quick start waits for readiness before it lists or calls tools', () => {
  assert.equal(quick.length, 2, 'the quick start and its try/finally form')
  for (const block of quick) {
    const ready = block.indexOf('whenReady(')
    assert.ok(ready > 0, 'whenReady is called')
    assert.ok(ready < block.indexOf('listTools('), 'whenReady comes before listTools')
  }
})

test('every TypeScript block of the README type-checks with tsc --strict', async (t) => {
  const blocks = tsBlocksOf(README)
  assert.ok(blocks.length >= quick.length, 'the quick start blocks are among them')
  await assertTypeChecks(makeApp(t, 'ahp-mcp-host-readme-'), blocks.map((code, i) => ({ file: `readme-${i + 1}.mts`, code })), 'the README')
})

test('the quick start runs: the server is ready, its tools are listed, echo answers', async (t) => {
  const app = makeApp(t, 'ahp-mcp-host-readme-')
  const outputs = []
  for (const [i, block] of quick.entries()) {
    assert.ok(block.includes(NPX_EVERYTHING), `quick start block ${i + 1} starts server-everything with npx`)
    const source = block.replace(NPX_EVERYTHING, LOCAL_EVERYTHING)
    const js = ts.transpileModule(source, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      reportDiagnostics: false,
    }).outputText
    const file = `quick-${i + 1}.mjs`
    writeFileSync(join(app, file), js)
    const result = await run([file], app)
    assert.equal(result.code, 0, `quick start block ${i + 1} failed:\n${result.stdout}${result.stderr}`)
    outputs.push(result.stdout)
  }
  const [first, second] = outputs
  assert.match(first, /is ready \(MCP \d{4}-\d{2}-\d{2}\)/)
  assert.match(first, /mcp__everything__echo/)
  assert.match(first, /Echo: hello/)
  const count = Number(/^(\d+) tools$/m.exec(second)?.[1])
  assert.ok(count > 0, `tools listed by the try/finally form: ${second}`)
})
