// The package's types under the TypeScript resolution older setups use
// (issue 24, item 15): `moduleResolution: "node10"` (`"node"`) reads no
// `exports` map, so the subpaths `ahp-mcp-host/mirror` and
// `ahp-mcp-host/reducers-wasm` resolve through `typesVersions`. The
// package is linked into a temporary app's node_modules.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { ROOT, tmpDir } from './helpers/host.mjs'

test('subpath types resolve under moduleResolution node10 (typesVersions)', (t) => {
  const app = tmpDir(t, 'ahp-node10-')
  mkdirSync(join(app, 'node_modules'))
  symlinkSync(ROOT, join(app, 'node_modules', 'ahp-mcp-host'), 'dir')
  writeFileSync(join(app, 'app.ts'), [
    "import { McpHost } from 'ahp-mcp-host'",
    "import { AhpStateMirror } from 'ahp-mcp-host/mirror'",
    "import { loadReducers } from 'ahp-mcp-host/reducers-wasm'",
    'export const made: [typeof McpHost, typeof AhpStateMirror, typeof loadReducers] = [McpHost, AhpStateMirror, loadReducers]',
    '',
  ].join('\n'))
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, noEmit: true, target: 'ES2022', module: 'commonjs', moduleResolution: 'node10',
      lib: ['ES2022', 'ESNext.Disposable', 'DOM'], types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')],
      ignoreDeprecations: '5.0', preserveSymlinks: true,
    },
    files: ['app.ts'],
  }))
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(process.execPath, [tsc, '-p', join(app, 'tsconfig.json')], { cwd: app, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
})
