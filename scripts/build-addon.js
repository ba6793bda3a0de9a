#!/usr/bin/env node
'use strict'
// Builds the native addon (the binding crate, binding/Cargo.toml; `CRATE`
// below), written to ahp-mcp-host.<platform>.node with
// binding.js / binding.d.ts beside it, and records what it built in
// target/ahp-addon-build.json of this clone (`lastBuild()`: {profile,
// cargoProfile, triple, file, cross}; in the clone, beside the .node it
// describes, even when CARGO_TARGET_DIR puts cargo's output elsewhere: a
// target dir may be shared by several clones, .ci/run's cache is).
//   - release (the default, `npm run build`): the way it ships
//     (`[profile.release]` in Cargo.toml: stripped, thin LTO); the benchmark,
//     the conformance runner and the release checks of .ci/run (consumer +
//     packaging tests with AHP_REQUIRE_RELEASE=1) use it;
//   - `--debug` (`npm test`, `npm run demo`): the `quick` Cargo profile (the
//     dev profile without debug info, Cargo.toml), system toolchain, for
//     the host triple (`--target` like the release build, so the compiled
//     dependencies are shared with `cargo test --profile quick --target
//     <host triple>`, scripts/cargo-test.js); every JS test runs on it;
//     recorded as profile `debug` (cargoProfile `quick`);
//   - `--symbols` (or AHP_ADDON_SYMBOLS=1): the release build NOT stripped
//     (CARGO_PROFILE_RELEASE_STRIP=false: only the link step differs), for
//     profiling (docs/benchmark.md, "Profile"); recorded as `release-symbols`.
//     The release builds use AHP_RELEASE_TARGET_DIR as cargo's target dir
//     when it is set (.ci/run), else CARGO_TARGET_DIR or target/ like the
//     debug build.
//   - `--stage <dir>` (with any of the above): writes the .node, binding.js,
//     binding.d.ts and the record into <dir> instead of the clone, which is
//     left alone; .ci/run builds the release addon that way while the JS
//     tests run on the debug one, then `npm run build` finds it compiled.
//
// On a Linux x64 host the addon is linked against an old glibc: napi-rs's
// cross toolchain (`napi build --use-napi-cross`: gcc and a glibc 2.17
// sysroot from the npm package `@napi-rs/cross-toolchain-x64-target-x86_64`,
// cached under ~/.napi-rs/cross-toolchain/). @napi-rs/cli 3.x asks npm for
// that package at the version of `@napi-rs/cross-toolchain` (1.0.5), which
// was never published for x86_64 (the newest is 1.0.0), so this script puts
// 1.0.0 where the CLI looks first. AHP_NO_NAPI_CROSS=1 builds with the
// system toolchain instead (the binary then needs this machine's glibc).
//
//   node scripts/build-addon.js [--debug | --symbols] [--stage <dir>]
//   node scripts/build-addon.js --unstage <dir>   # what --stage <dir> built, into the clone
//   node scripts/build-addon.js --fetch-toolchain   # only fetch the cross toolchain

const { spawnSync, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const TRIPLE = 'x86_64-unknown-linux-gnu'
const TOOLCHAIN_PACKAGE = '@napi-rs/cross-toolchain-x64-target-x86_64'
const TOOLCHAIN_VERSION = '1.0.0'
/** The binding crate (binding/, cdylib), its files written to the package root. */
const CRATE = ['--manifest-path', path.join('binding', 'Cargo.toml'), '--output-dir', '.']
/** The Cargo profile of `--debug` (Cargo.toml `[profile.quick]`), shared with scripts/cargo-test.js. */
const QUICK_PROFILE = 'quick'

function fail(message) {
  console.error(`build-addon: ${message}`)
  process.exit(1)
}

/** Where `napi build --use-napi-cross` looks for the toolchain (cli.js `pickCrossToolchain`). */
function toolchainDir() {
  const { version } = require('@napi-rs/cross-toolchain/package.json')
  return path.join(os.homedir(), '.napi-rs', 'cross-toolchain', version, TRIPLE)
}

/** Downloads and unpacks the cross toolchain once (`npm pack`, then `tar`: gzip, then xz). */
function ensureToolchain() {
  const dest = toolchainDir()
  if (fs.existsSync(path.join(dest, 'package.json'))) return
  console.error(`build-addon: fetching ${TOOLCHAIN_PACKAGE}@${TOOLCHAIN_VERSION} (glibc 2.17 sysroot, ~50 MB) into ${dest}`)
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ahp-cross-'))
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const name = execFileSync(npm, ['pack', '--silent', `${TOOLCHAIN_PACKAGE}@${TOOLCHAIN_VERSION}`], {
      cwd: scratch,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop()
    execFileSync('tar', ['-xzf', name], { cwd: scratch })
    const partial = `${dest}.partial`
    fs.rmSync(partial, { recursive: true, force: true })
    fs.mkdirSync(partial, { recursive: true })
    execFileSync('tar', ['-xJf', path.join(scratch, 'package', `${TRIPLE}.tar.xz`), '-C', partial])
    fs.rmSync(dest, { recursive: true, force: true })
    fs.renameSync(partial, dest)
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** This machine's Rust host triple (`rustc -vV`, line `host:`). */
function hostTriple() {
  const out = execFileSync(process.env.RUSTC || 'rustc', ['-vV'], { encoding: 'utf8' })
  const m = /^host: (\S+)$/m.exec(out)
  if (!m) fail(`no host triple in \`rustc -vV\`: ${out}`)
  return m[1]
}

/** Cargo's target dir for the workspace: CARGO_TARGET_DIR, else target/ of the clone. */
function targetDir() {
  return process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target')
}

/**
 * spawnSync(cmd, args, options) holding an exclusive lock on
 * <dir>/ahp-build.lock (flock(1), where there is one) for the whole run. A
 * target dir may be shared by several clones (.ci/run's cache): cargo locks
 * it only while it compiles, and napi (or scripts/build-wasm.js) copies the
 * built file out of it after cargo ends, by a name that is the same for
 * every clone; the lock keeps another clone's build from replacing that
 * file in between.
 */
function spawnLocked(dir, cmd, args, options) {
  const flock = process.platform !== 'win32' && spawnSync('flock', ['--version'], { stdio: 'ignore' }).status === 0
  if (!flock) return spawnSync(cmd, args, options)
  fs.mkdirSync(dir, { recursive: true })
  return spawnSync('flock', [path.join(dir, 'ahp-build.lock'), cmd, ...args], options)
}

/** Where this clone records what it built: target/ahp-addon-build.json (of `dir`, the clone by default). */
function stampFile(dir = path.join(ROOT, 'target')) {
  return path.join(dir, 'ahp-addon-build.json')
}

/** What the last build into this clone recorded: {profile: 'release' | 'release-symbols' | 'debug', cargoProfile, triple, file, cross}, or undefined. */
function lastBuild() {
  try {
    return JSON.parse(fs.readFileSync(stampFile(), 'utf8'))
  } catch {
    return undefined
  }
}

/** The value after `flag` in argv, or undefined. */
function option(flag) {
  const at = process.argv.indexOf(flag)
  if (at < 0) return undefined
  const value = process.argv[at + 1]
  if (!value || value.startsWith('--')) fail(`${flag} needs a value`)
  return value
}

/**
 * `--unstage <dir>`: puts what `--stage <dir>` built into the clone (the
 * .node its record names, binding.js, binding.d.ts, and the record into
 * target/), as if it had been built here. Building again instead would
 * compile the binding crate again (napi build forces that every time), and
 * with LTO that is minutes.
 */
function unstage(dir) {
  const record = stampFile(path.resolve(dir))
  if (!fs.existsSync(record)) fail(`--unstage: ${record} is missing; build with --stage ${dir} first`)
  const { file, profile } = JSON.parse(fs.readFileSync(record, 'utf8'))
  for (const name of [file, 'binding.js', 'binding.d.ts']) fs.copyFileSync(path.join(dir, name), path.join(ROOT, name))
  fs.mkdirSync(path.join(ROOT, 'target'), { recursive: true })
  fs.copyFileSync(record, stampFile())
  console.error(`build-addon: ${file} (${profile}) from ${dir}`)
}

function main() {
  if (process.argv.includes('--fetch-toolchain')) return ensureToolchain()
  const staged = option('--unstage')
  if (staged) return unstage(staged)
  if (process.argv.includes('--host-triple')) return console.log(hostTriple())
  const debug = process.argv.includes('--debug')
  const symbols = !debug && (process.argv.includes('--symbols') || process.env.AHP_ADDON_SYMBOLS === '1')
  const stage = option('--stage')
  const outDir = stage ? path.resolve(stage) : ROOT
  const triple = hostTriple()
  const [manifestFlag, manifest] = CRATE
  const args = ['build', manifestFlag, manifest, '--output-dir', outDir, '--platform', '--target', triple, '--js', 'binding.js', '--dts', 'binding.d.ts']
  args.push(...(debug ? ['--profile', QUICK_PROFILE] : ['--release']))
  const cross = !debug && process.platform === 'linux' && process.arch === 'x64' && process.env.AHP_NO_NAPI_CROSS !== '1'
  if (cross) {
    ensureToolchain()
    args.push('--use-napi-cross')
  }
  const env = { ...process.env }
  if (symbols) env.CARGO_PROFILE_RELEASE_STRIP = 'false'
  // The release build's own target dir when AHP_RELEASE_TARGET_DIR says so
  // (.ci/run: a cache beside the debug one, so both can build at once;
  // cargo locks a target dir for the whole of a build).
  const releaseDir = !debug && process.env.AHP_RELEASE_TARGET_DIR
  if (releaseDir) args.push('--target-dir', releaseDir)
  const stampDir = stage ? outDir : path.join(ROOT, 'target')
  const stamp = stampFile(stampDir)
  fs.rmSync(stamp, { force: true }) // a failed build leaves no stale record
  fs.mkdirSync(outDir, { recursive: true })
  const napi = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi')
  const started = Date.now()
  const r = spawnLocked(releaseDir || targetDir(), napi, args, { cwd: ROOT, stdio: 'inherit', env })
  if (r.error) fail(`cannot run ${napi}: ${r.error.message}`)
  if (r.status !== 0) fail(`napi ${args.join(' ')} exited with ${r.status}`)
  // This platform's file (a Windows build, scripts/build-windows.js, may lie beside it).
  const file = fs.readdirSync(outDir).find((f) => /^ahp-mcp-host\..+\.node$/.test(f) && f.startsWith(`ahp-mcp-host.${process.platform}-`))
  const profile = debug ? 'debug' : symbols ? 'release-symbols' : 'release'
  const cargoProfile = debug ? QUICK_PROFILE : 'release'
  fs.mkdirSync(stampDir, { recursive: true })
  fs.writeFileSync(stamp, JSON.stringify({ profile, cargoProfile, triple, file, cross }) + '\n')
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  console.error(`build-addon: ${path.relative(ROOT, path.join(outDir, file)) || file} (${profile}, cargo profile ${cargoProfile}) in ${seconds} s`)
}

module.exports = { CRATE, QUICK_PROFILE, hostTriple, lastBuild, spawnLocked, targetDir }

if (require.main === module) main()
