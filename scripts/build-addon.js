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
//   - release builds on a Linux x64 host are profile-guided (PGO, see
//     `pgoProfile`): an instrumented build, a training run of the quick
//     benchmark scenarios through the JS API (scripts/pgo-train.mjs), then
//     the build that ships, optimized with that profile (code that ran is
//     laid out apart from code that did not, so fewer pages of the addon
//     are resident). `--no-pgo` or AHP_NO_PGO=1 builds without it (.ci/run
//     does, for time); recorded as `pgo` in the build record.
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
//   node scripts/build-addon.js [--debug | --symbols] [--no-pgo] [--stage <dir>]
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

/** What the last build into this clone recorded: {profile: 'release' | 'release-symbols' | 'debug', cargoProfile, triple, file, cross, pgo}, or undefined. */
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

/** The arguments of `napi build` into `outDir` (cargo's target dir `targetDirFlag`, if any). */
function napiArgs({ debug, cross, outDir, targetDirFlag }) {
  const [manifestFlag, manifest] = CRATE
  const args = ['build', manifestFlag, manifest, '--output-dir', outDir, '--platform', '--target', hostTriple(), '--js', 'binding.js', '--dts', 'binding.d.ts']
  args.push(...(debug ? ['--profile', QUICK_PROFILE] : ['--release']))
  if (cross) args.push('--use-napi-cross')
  if (targetDirFlag) args.push('--target-dir', targetDirFlag)
  return args
}

/** Runs `napi build` with `args` and `env`, holding the lock of cargo's target dir `dir`; fails the script on an error. */
function napiBuild(args, env, dir) {
  const napi = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'napi.cmd' : 'napi')
  const r = spawnLocked(dir, napi, args, { cwd: ROOT, stdio: 'inherit', env })
  if (r.error) fail(`cannot run ${napi}: ${r.error.message}`)
  if (r.status !== 0) fail(`napi ${args.join(' ')} exited with ${r.status}`)
}

/** This platform's addon file in `dir` (a Windows build, scripts/build-windows.js, may lie beside it). */
function addonIn(dir) {
  return fs.readdirSync(dir).find((f) => /^ahp-mcp-host\..+\.node$/.test(f) && f.startsWith(`ahp-mcp-host.${process.platform}-`))
}

/**
 * The environment that links the addon with the code layout of `functions`
 * (a file of layoutFunctions): scripts/link-layout.js as cargo's linker,
 * calling the cross toolchain's gcc, reading sections with its readelf.
 */
function layoutLinker(functions) {
  const bin = path.join(toolchainDir(), 'bin')
  return {
    [`CARGO_TARGET_${TRIPLE.toUpperCase().replace(/-/g, '_')}_LINKER`]: path.join(__dirname, 'link-layout.js'),
    AHP_LINK_LAYOUT_CC: path.join(bin, `${TRIPLE}-gcc`),
    AHP_LINK_LAYOUT_READELF: path.join(bin, `${TRIPLE}-readelf`),
    AHP_LINK_LAYOUT_FUNCTIONS: functions,
  }
}

/** `flags` (a RUSTFLAGS value, maybe empty) with `flag` added. */
function withFlag(flags, flag) {
  return flags ? `${flags} ${flag}` : flag
}

/**
 * LLVM's `llvm-profdata` of this Rust toolchain (rustup's `llvm-tools`
 * component, added when missing), or undefined when it cannot be had.
 */
function llvmProfdata() {
  const sysroot = execFileSync(process.env.RUSTC || 'rustc', ['--print', 'sysroot'], { encoding: 'utf8' }).trim()
  const tool = path.join(sysroot, 'lib', 'rustlib', hostTriple(), 'bin', process.platform === 'win32' ? 'llvm-profdata.exe' : 'llvm-profdata')
  if (!fs.existsSync(tool)) {
    console.error('build-addon: adding the llvm-tools component for PGO (rustup component add llvm-tools)')
    spawnSync('rustup', ['component', 'add', 'llvm-tools'], { stdio: 'inherit' })
  }
  return fs.existsSync(tool) ? tool : undefined
}

/**
 * Profile-guided optimization of a release build: builds the addon
 * instrumented (`-Cprofile-generate`, its own target dir `<release dir>/pgo-generate`,
 * so the plain build's cache stays), runs scripts/pgo-train.mjs with it,
 * and merges the raw profiles into `<release dir>/pgo/merged.profdata`
 * (the same path every time, so the final build's RUSTFLAGS, and with them
 * cargo's cache of the dependencies, stay the same). Returns {profile: that
 * path, layout: the file of layoutFunctions (cross builds)}, or undefined
 * (with a warning) when llvm-profdata is missing: the build then goes on
 * without PGO.
 */
function pgoProfile({ cross, env, releaseDir }) {
  const profdataTool = llvmProfdata()
  if (!profdataTool) {
    console.error('build-addon: WARNING: no llvm-profdata (rustup component llvm-tools): building WITHOUT PGO')
    return undefined
  }
  const base = releaseDir || targetDir()
  const work = path.join(base, 'pgo')
  const raw = path.join(work, 'raw')
  const instrumented = path.join(work, 'instrumented')
  const profile = path.join(work, 'merged.profdata')
  for (const dir of [raw, instrumented]) fs.rmSync(dir, { recursive: true, force: true })
  fs.mkdirSync(instrumented, { recursive: true })
  const genDir = path.join(base, 'pgo-generate')
  const genEnv = { ...env, RUSTFLAGS: withFlag(env.RUSTFLAGS, `-Cprofile-generate=${raw}`) }
  console.error('build-addon: PGO 1/3: the instrumented build')
  napiBuild(napiArgs({ debug: false, cross, outDir: instrumented, targetDirFlag: genDir }), genEnv, genDir)
  console.error('build-addon: PGO 2/3: the training run (scripts/pgo-train.mjs)')
  const addon = path.join(instrumented, addonIn(instrumented))
  const train = spawnSync(process.execPath, [path.join(__dirname, 'pgo-train.mjs'), '--addon', addon, '--out', raw], { cwd: ROOT, stdio: 'inherit' })
  if (train.status !== 0) fail(`the PGO training run failed (${train.error?.message ?? `exit ${train.status}`})`)
  const profiles = fs.readdirSync(raw).filter((f) => f.endsWith('.profraw')).map((f) => path.join(raw, f))
  if (!profiles.length) fail(`the PGO training run wrote no profile into ${raw}`)
  profdata(profdataTool, ['merge', '-o', profile, ...profiles])
  const layout = cross ? layoutFunctions(profdataTool, profiles, work) : undefined
  console.error(`build-addon: PGO 3/3: the optimized build (${profiles.length} profiles merged)`)
  return { profile, layout }
}

/** Runs llvm-profdata (`tool`) with `args`; fails the script, naming the command, on an error. */
function profdata(tool, args) {
  const run = spawnSync(tool, args, { stdio: 'inherit' })
  if (run.status !== 0) fail(`llvm-profdata ${args.slice(0, 2).join(' ')} failed (${run.error?.message ?? `exit ${run.status}`})`)
}

/**
 * The code layout of the PGO build (scripts/link-layout.js): writes the
 * names of the functions the training's `rss` scenario ran (its
 * profiles, `ahp-rss-*.profraw`: start a host, connect a stdio server,
 * list, call; a function ran when one of its counters is not 0) into
 * `<work>/layout-functions.txt`, one per line, and returns that path;
 * undefined (with a warning) when the scenario left no profile.
 */
function layoutFunctions(profdataTool, profiles, work) {
  const core = profiles.filter((f) => path.basename(f).startsWith('ahp-rss-'))
  if (!core.length) {
    console.error('build-addon: WARNING: no profile of the rss scenario: the addon is linked without the code layout')
    return undefined
  }
  const text = path.join(work, 'rss.proftext')
  profdata(profdataTool, ['merge', '--text', '-o', text, ...core])
  const ran = ranFunctions(fs.readFileSync(text, 'utf8'))
  const file = path.join(work, 'layout-functions.txt')
  fs.writeFileSync(file, ran.join('\n') + '\n')
  console.error(`build-addon: code layout: ${ran.length} functions the rss scenario ran`)
  return file
}

/**
 * The names of the functions with a non-zero counter in an IR-level
 * profile in llvm-profdata's text format (a name line, `# Func Hash:`,
 * the hash, `# Num Counters:`, n, `# Counter Values:`, n values, then
 * maybe value-profile records, a blank line). A local function's name is
 * `<module>;<symbol>` (the codegen unit it is in; Rust makes a local copy
 * of a generic function in each unit that uses it), kept whole.
 */
function ranFunctions(text) {
  const ran = new Set()
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '# Counter Values:') continue
    const name = lines[i - 5]
    const count = Number(lines[i - 1])
    const values = lines.slice(i + 1, i + 1 + count)
    if (name && values.some((v) => Number(v) > 0)) ran.add(name)
  }
  return [...ran]
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
  const cross = !debug && process.platform === 'linux' && process.arch === 'x64' && process.env.AHP_NO_NAPI_CROSS !== '1'
  if (cross) ensureToolchain()
  const env = { ...process.env }
  if (symbols) env.CARGO_PROFILE_RELEASE_STRIP = 'false'
  // The release build's own target dir when AHP_RELEASE_TARGET_DIR says so
  // (.ci/run: a cache beside the debug one, so both can build at once;
  // cargo locks a target dir for the whole of a build).
  const releaseDir = !debug && process.env.AHP_RELEASE_TARGET_DIR
  const stampDir = stage ? outDir : path.join(ROOT, 'target')
  const stamp = stampFile(stampDir)
  fs.rmSync(stamp, { force: true }) // a failed build leaves no stale record
  fs.mkdirSync(outDir, { recursive: true })
  const started = Date.now()
  const wantPgo = !debug && process.platform === 'linux' && process.arch === 'x64' &&
    !process.argv.includes('--no-pgo') && process.env.AHP_NO_PGO !== '1'
  const { profile, layout } = (wantPgo && pgoProfile({ cross, env, releaseDir })) || {}
  if (profile) env.RUSTFLAGS = withFlag(env.RUSTFLAGS, `-Cprofile-use=${profile}`)
  if (layout) Object.assign(env, layoutLinker(layout))
  napiBuild(napiArgs({ debug, cross, outDir, targetDirFlag: releaseDir }), env, releaseDir || targetDir())
  const file = addonIn(outDir)
  const kind = debug ? 'debug' : symbols ? 'release-symbols' : 'release'
  const cargoProfile = debug ? QUICK_PROFILE : 'release'
  fs.mkdirSync(stampDir, { recursive: true })
  fs.writeFileSync(stamp, JSON.stringify({ profile: kind, cargoProfile, triple, file, cross, pgo: Boolean(profile) }) + '\n')
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  console.error(`build-addon: ${path.relative(ROOT, path.join(outDir, file)) || file} (${kind}${profile ? ', PGO' : ''}, cargo profile ${cargoProfile}) in ${seconds} s`)
}

module.exports = { CRATE, QUICK_PROFILE, hostTriple, lastBuild, ranFunctions, spawnLocked, targetDir }

if (require.main === module) main()
