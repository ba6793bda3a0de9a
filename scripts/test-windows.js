#!/usr/bin/env node
'use strict'
// Runs the Windows suite (`npm run test:windows`): every
// __test__/windows/*.win.mjs file with `node --test`, run by Node for
// Windows under Wine (scripts/wine.js) against the Windows addon that
// `npm run build:windows` put at the package root. The files are named
// `.win.mjs` so that the Linux `node --test __test__/` never picks them up.
//
// On Windows itself (the release workflow's Windows row) the same files run
// with the running Node, no Wine.
//
//   node scripts/test-windows.js [file filter…]   # e.g. shims (runs shims.win.mjs only)

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const SUITE = path.join(ROOT, '__test__', 'windows')
const ADDON = 'ahp-mcp-host.win32-x64-msvc.node'

function fail(message) {
  console.error(`test-windows: ${message}`)
  process.exit(1)
}

/**
 * For package.win.mjs: packs the main package and the win32-x64-msvc
 * package (scripts/pack.js, with the binary `npm run build:windows` made)
 * and installs both tarballs into a fresh app (`npm install --os=win32
 * --cpu=x64`, and `--force` on Linux; offline: nothing is fetched);
 * returns the app's folder.
 */
function consumerApp() {
  const { pack } = require('./pack.js')
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-win-consumer-'))
  process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }))
  const packed = pack(path.join(work, 'tarballs'), { suffix: 'win32-x64-msvc' })
  const app = path.join(work, 'app')
  fs.mkdirSync(app)
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'windows-consumer', version: '1.0.0', private: true }) + '\n')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const flags = ['--no-audit', '--no-fund', '--offline', '--no-package-lock', '--os=win32', '--cpu=x64']
  // npm refuses a tarball whose `os` is not this machine's even with --os: --force (on Linux only).
  if (process.platform !== 'win32') flags.push('--force')
  const r = spawnSync(npm, ['install', ...flags, packed.main.tarball, packed.platform.tarball], { cwd: app, encoding: 'utf8', shell: process.platform === 'win32' })
  if (r.status !== 0) fail(`npm install of the packed tarballs failed:\n${r.stdout}\n${r.stderr}`)
  console.error(`test-windows: ${packed.platform.filename} ${packed.platform.size} B packed (${packed.platform.unpackedSize} B unpacked), installed into a fresh app`)
  return app
}

/**
 * For oauth.win.mjs and keychain.win.mjs: starts __test__/windows/fixtures/oauth-service.mjs
 * (the OAuth world: a real authorization server and a protected MCP server
 * on 127.0.0.1) with this script's own Node, since Node for Windows' fetch
 * fails under Wine; resolves its base URL. It ends with this script.
 */
function oauthService() {
  const { spawn } = require('node:child_process')
  const script = path.join(SUITE, 'fixtures', 'oauth-service.mjs')
  const child = spawn(process.execPath, [script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  process.on('exit', () => child.kill('SIGTERM'))
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /LISTENING (\d+)/.exec(out)
      if (m) resolve(`http://127.0.0.1:${m[1]}`)
    })
    child.once('exit', (code) => reject(new Error(`oauth-service.mjs exited with ${code}`)))
  })
}

async function main() {
  const filters = process.argv.slice(2)
  const files = fs
    .readdirSync(SUITE)
    .filter((f) => f.endsWith('.win.mjs'))
    .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
    .sort()
  if (files.length === 0) fail(`no __test__/windows/*.win.mjs file matches ${filters.join(' ')}`)
  for (const needed of [ADDON, 'binding.js']) {
    if (!fs.existsSync(path.join(ROOT, needed))) fail(`${needed} is missing: run \`npm run build:windows\` first`)
  }
  const env = {}
  if (files.includes('package.win.mjs')) env.AHP_WIN_CONSUMER_APP = consumerApp()
  // The files that sign in against the OAuth world.
  if (files.some((f) => ['oauth.win.mjs', 'keychain.win.mjs'].includes(f))) env.AHP_WIN_OAUTH_SERVICE = await oauthService().catch((e) => fail(e.message))
  // Each test is bounded (a hung one fails, never holds the run); the run itself by runNode's timeout.
  const args = ['--test', '--test-concurrency=1', '--test-reporter=spec', '--test-timeout=300000']
  const started = Date.now()
  let status
  if (process.platform === 'win32') {
    const r = spawnSync(process.execPath, [...args, ...files.map((f) => path.join(SUITE, f))], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, ...env },
    })
    status = r.status
  } else {
    const { runNode, winPath } = require('./wine.js')
    if (env.AHP_WIN_CONSUMER_APP) env.AHP_WIN_CONSUMER_APP = winPath(env.AHP_WIN_CONSUMER_APP)
    const r = runNode([...args, ...files.map((f) => winPath(path.join(SUITE, f)))], { cwd: ROOT, env })
    process.stdout.write(r.stdout.replaceAll('\r\n', '\n'))
    process.stderr.write(r.stderr.replaceAll('\r\n', '\n'))
    status = r.status
  }
  const seconds = Math.round((Date.now() - started) / 1000)
  console.error(`test-windows: ${files.length} files in ${seconds} s, exit ${status}`)
  process.exit(status ?? 1)
}

main().catch((e) => fail(e.stack ?? String(e)))
