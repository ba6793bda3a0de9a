// The README's TypeScript is real: every ```ts block of "Quick start",
// "Use from TypeScript" and "Electron & VS Code" is type-checked with
// `tsc --strict` against index.d.ts (and the pinned @types/vscode) in a
// temporary app that has this package as `node_modules/ahp-mcp-host`; the
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
import { readFileSync, writeFileSync, mkdirSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { ROOT, EVERYTHING, tmpDir } from './helpers/host.mjs'

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
  const section = README.slice(start, end < 0 ? undefined : end)
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
}

/** A temporary app with this package (and the type packages) linked into node_modules. */
function makeApp(t) {
  const app = tmpDir(t, 'ahp-mcp-host-readme-')
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true })
  symlinkSync(ROOT, join(app, 'node_modules', 'ahp-mcp-host'), 'dir')
  for (const types of ['node', 'vscode']) {
    symlinkSync(join(ROOT, 'node_modules', '@types', types), join(app, 'node_modules', '@types', types), 'dir')
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'readme-app', private: true, type: 'module' }))
  return app
}

/** Runs `node <args>` in `cwd`; `{code, stdout, stderr}`. */
function run(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
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

test('every TypeScript block of Quick start, Use from TypeScript and Electron & VS Code type-checks with tsc --strict', async (t) => {
  const app = makeApp(t)
  const files = []
  for (const [section, tag] of [['Quick start', 'quick'], ['Use from TypeScript', 'tour'], ['Electron & VS Code', 'vscode']]) {
    const blocks = tsBlocks(section)
    assert.ok(blocks.length > 0, `"${section}" has a ts block`)
    blocks.forEach((code, i) => {
      const file = `${tag}-${i + 1}.mts`
      writeFileSync(join(app, file), code)
      files.push(file)
    })
  }
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2022', 'ESNext.Disposable'],
      types: ['node'],
    },
    files,
  }))
  const { code, stdout, stderr } = await run([join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], app)
  assert.equal(code, 0, `tsc --strict on the README blocks (${files.join(', ')}):\n${stdout}${stderr}`)
})

test('the quick start runs: the server is ready, its tools are listed, echo answers', async (t) => {
  const app = makeApp(t)
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
