// Bundling an app with the package (issue 24, item 15): esbuild's `file`
// loader turns the addon's require() into a file name; the package then
// says what happened and how to bundle it, instead of "NativeHost is not a
// constructor" or "unsupported platform… reinstall".

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { ROOT, tmpDir } from './helpers/host.mjs'

test('a bundle made with a file loader for .node fails at require with ERR_AHP_NOT_AN_ADDON saying how to bundle', (t) => {
  const dir = tmpDir(t, 'ahp-bundle-')
  const entry = join(dir, 'entry.js')
  writeFileSync(entry, `try { require(${JSON.stringify(join(ROOT, 'index.js'))}) } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }\n`)
  const esbuild = join(ROOT, 'node_modules', 'esbuild', 'bin', 'esbuild')
  const built = spawnSync(esbuild, [entry, '--bundle', '--platform=node', '--loader:.node=file', `--outdir=${join(dir, 'out')}`], { encoding: 'utf8' })
  assert.equal(built.status, 0, built.stderr)
  const run = spawnSync(process.execPath, [join(dir, 'out', 'entry.js')], { encoding: 'utf8', cwd: join(dir, 'out') })
  const failure = JSON.parse(run.stdout.trim().split('\n').at(-1))
  assert.equal(failure.code, 'ERR_AHP_NOT_AN_ADDON', failure.message)
  assert.match(failure.message, /gave the file name ".*\.node", not a Node addon: a bundler rewrote/)
  assert.match(failure.message, /--external:ahp-mcp-host/)
})
