// Type-checks TypeScript taken from the documentation (README.md,
// docs/guide/*.md) the way an app sees this package: in a temporary app that
// has the repository as `node_modules/ahp-mcp-host` (and the pinned
// @types/node and @types/vscode), with `tsc --strict` of the repository's
// TypeScript. Used by readme.test.mjs and guides.test.mjs. Needs no addon:
// only index.d.ts and the lib/*.d.ts it exports are read.

import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/** The fenced ```ts blocks of Markdown `text`, in order. */
export function tsBlocksOf(text) {
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1])
}

/** A temporary app (removed after `t`) with this package and the type packages linked into node_modules. */
export function makeApp(t, prefix = 'ahp-mcp-host-docs-') {
  const app = mkdtempSync(join(tmpdir(), prefix))
  t.after(() => rmSync(app, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }))
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true })
  symlinkSync(ROOT, join(app, 'node_modules', 'ahp-mcp-host'), 'dir')
  for (const types of ['node', 'vscode']) {
    symlinkSync(join(ROOT, 'node_modules', '@types', types), join(app, 'node_modules', '@types', types), 'dir')
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'docs-app', private: true, type: 'module' }))
  return app
}

/** Runs `node <args>` in `cwd`; `{code, stdout, stderr}`. */
export function run(args, cwd) {
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

/**
 * Writes each `{file, code}` into `app` and type-checks them together with
 * `tsc --strict` (ES2022, NodeNext, `esnext.disposable`, @types/node);
 * fails the test with tsc's output, which names the file, when one does not
 * compile.
 */
export async function assertTypeChecks(app, blocks, what) {
  assert.ok(blocks.length > 0, `${what}: no TypeScript blocks`)
  for (const { file, code } of blocks) writeFileSync(join(app, file), code)
  const files = blocks.map((b) => b.file)
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
  assert.equal(code, 0, `tsc --strict on ${what} (${files.join(', ')}):\n${stdout}${stderr}`)
}
