#!/usr/bin/env node
// `npm run conformance`: runs every client scenario of the pinned
// @modelcontextprotocol/conformance suite under every wire version it
// applies to (conformance/plan.mjs decides which (scenario, version) runs
// happen) against conformance/client.mjs, which drives the ahp-mcp-host
// addon, and writes docs/conformance.md (conformance/report.mjs).
//
//   npm run conformance                          # every run, writes the doc
//   npm run conformance -- --check               # every run, fails on an unexpected
//                                                # failure or a stale expected failure
//   npm run conformance -- tools_call            # this scenario at each of its versions
//   npm run conformance -- tools_call@2026-07-28 # one run; subsets only print
//
// The suite needs Node >= 22 (scripts/node22.js provides one); the client
// runs under the Node that runs this script (CONFORMANCE_CLIENT_NODE
// overrides). Runs go CONFORMANCE_CONCURRENCY (default 2) at a time, each in
// its own suite process with its own timeout (CONFORMANCE_TIMEOUT_MS,
// default 30 000, the suite's client timeout) and its own output folder.
//
// A run fails when a check has status FAILURE, the client timed out, or the
// client exited with an error the scenario does not allow. Failing runs are
// the report, not an error: without --check the exit code is 0 unless the
// harness itself broke (no Node 22, the suite missing, a run without results,
// a bad expected-failures file).
//
// conformance/expected-failures.json maps a wire version to
// {scenario: written reason} for runs expected to fail; the reason is
// required and printed in docs/conformance.md.

import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseClientList, parseRequirements, planRuns } from './plan.mjs'
import { renderDoc } from './report.mjs'

const require = createRequire(import.meta.url)
const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
const SUITE_PACKAGE = '@modelcontextprotocol/conformance'
const PINNED_VERSION = '0.2.0-alpha.12'
const SUITE_DIR = join(ROOT, 'node_modules', ...SUITE_PACKAGE.split('/'))
const SUITE_CLI = join(SUITE_DIR, 'dist', 'index.js')
const CLIENT = join(HERE, 'client.mjs')
const EXPECTED_FAILURES = join(HERE, 'expected-failures.json')
const DOC = join(ROOT, 'docs', 'conformance.md')
const TIMEOUT_MS = Number(process.env.CONFORMANCE_TIMEOUT_MS ?? 30_000)
const CONCURRENCY = Math.max(1, Number(process.env.CONFORMANCE_CONCURRENCY ?? 2))

class HarnessError extends Error {}

function shellQuote(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`
}

function run(cmd, args, { timeoutMs } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = timeoutMs
      ? setTimeout(() => {
          timedOut = true
          try {
            process.kill(-child.pid, 'SIGKILL') // the suite, its shell and the client
          } catch {
            child.kill('SIGKILL')
          }
        }, timeoutMs)
      : null
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, timedOut })
    })
    child.on('error', (err) => {
      if (timer) clearTimeout(timer)
      resolve({ code: -1, signal: null, stdout, stderr: stderr + String(err), timedOut })
    })
  })
}

function suiteVersion() {
  const pkg = join(SUITE_DIR, 'package.json')
  if (!existsSync(pkg) || !existsSync(SUITE_CLI)) throw new HarnessError(`${SUITE_PACKAGE} is not installed; run npm install`)
  const { version } = JSON.parse(readFileSync(pkg, 'utf8'))
  if (version !== PINNED_VERSION) throw new HarnessError(`${SUITE_PACKAGE} ${version} is installed but ${PINNED_VERSION} is pinned; run npm install`)
  return version
}

async function suite(node22, args) {
  const r = await run(node22, [SUITE_CLI, ...args], { timeoutMs: 60_000 })
  if (r.code !== 0) throw new HarnessError(`conformance ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r.stdout
}

/** Asks the suite what to run: the client scenarios, the requirement revisions and their sets. */
async function loadPlan(node22) {
  const scenarios = parseClientList(await suite(node22, ['list', '--client']))
  if (scenarios.length === 0) throw new HarnessError('conformance list --client lists no scenario')
  const help = await suite(node22, ['list', '--help'])
  const revisions = /Requirement sets available:\s*([\d\-,\s]+)/.exec(help.replace(/\s+/g, ' '))?.[1].split(',').map((s) => s.trim()).filter(Boolean).sort()
  if (!revisions?.length) throw new HarnessError(`no requirement sets in: ${help}`)
  const requirements = new Map()
  for (const revision of revisions) {
    const set = parseRequirements(await suite(node22, ['list', '--requirements', revision]))
    if (set.required.length === 0) throw new HarnessError(`conformance list --requirements ${revision} lists no client scenario`)
    requirements.set(revision, set)
  }
  try {
    return { ...planRuns(scenarios, requirements), requirements }
  } catch (err) {
    throw new HarnessError(err.message)
  }
}

function loadExpectedFailures(runs) {
  if (!existsSync(EXPECTED_FAILURES)) return {}
  const data = JSON.parse(readFileSync(EXPECTED_FAILURES, 'utf8'))
  const isObject = (x) => typeof x === 'object' && x !== null && !Array.isArray(x)
  if (!isObject(data)) throw new HarnessError(`${EXPECTED_FAILURES}: expected {"<wire version>": {"<scenario>": "<reason>"}}`)
  for (const [version, entries] of Object.entries(data)) {
    if (!isObject(entries)) throw new HarnessError(`${EXPECTED_FAILURES}: ${version} must map scenarios to reasons`)
    for (const [scenario, reason] of Object.entries(entries)) {
      if (!runs.some((r) => r.scenario === scenario && r.version === version)) {
        throw new HarnessError(`${EXPECTED_FAILURES}: ${scenario} is not run at ${version} (see docs/conformance.md for the runs)`)
      }
      if (typeof reason !== 'string' || reason.trim() === '') throw new HarnessError(`${EXPECTED_FAILURES}: ${scenario} at ${version} needs a written reason`)
    }
  }
  return data
}

function findFile(dir, name) {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry)
    if (statSync(p).isDirectory()) {
      const found = findFile(p, name)
      if (found) return found
    } else if (entry === name) return p
  }
  return null
}

async function runOne(node22, clientCommand, outRoot, planned) {
  const { scenario, version, force } = planned
  const outDir = join(outRoot, version, scenario.replaceAll('/', '_'))
  mkdirSync(outDir, { recursive: true })
  const started = Date.now()
  const args = ['client', '--command', clientCommand, '--scenario', scenario, '--spec-version', version, '--timeout', String(TIMEOUT_MS), '-o', outDir]
  if (force) args.push('--force')
  const r = await run(node22, [SUITE_CLI, ...args], { timeoutMs: TIMEOUT_MS + 30_000 })
  writeFileSync(join(outDir, 'suite.stdout.txt'), r.stdout)
  writeFileSync(join(outDir, 'suite.stderr.txt'), r.stderr)
  const seconds = (Date.now() - started) / 1000
  const base = { ...planned, outDir, seconds }
  const checksFile = findFile(outDir, 'checks.json')
  if (!checksFile) {
    const skipped = /SKIPPED: .*/.exec(r.stdout)?.[0]
    const why = skipped ?? `suite exit ${r.code ?? r.signal}${r.timedOut ? ', killed' : ''}`
    return { ...base, status: 'broken', passed: 0, failed: 0, warnings: 0, checks: [], notes: [`no results (${why})`] }
  }
  const checks = JSON.parse(readFileSync(checksFile, 'utf8'))
  const count = (s) => checks.filter((c) => c.status === s).length
  const notes = []
  const exit = /Client exited with code (-?\d+)/.exec(r.stderr)
  const clientTimedOut = /Client timed out/.test(r.stderr)
  // The suite flags a client error unless the scenario expects one (e.g. auth/resource-mismatch).
  const clientErrorNotAllowed = /CLIENT EXITED WITH ERROR/.test(r.stderr)
  if (clientTimedOut) notes.push(`client timed out after ${TIMEOUT_MS} ms`)
  else if (exit) notes.push(clientErrorNotAllowed ? `client exit ${exit[1]}` : `client exit ${exit[1]} (the scenario allows it)`)
  const failedIds = [...new Set(checks.filter((c) => c.status === 'FAILURE').map((c) => c.id))]
  if (failedIds.length > 0) notes.push(`failed: ${failedIds.map((id) => `\`${id}\``).join(', ')}`)
  const failed = count('FAILURE')
  const status = failed > 0 || clientTimedOut || clientErrorNotAllowed ? 'fail' : 'pass'
  return { ...base, status, passed: count('SUCCESS'), failed, warnings: count('WARNING'), checks, notes, resultDir: dirname(checksFile) }
}

/** Runs `plan` at most `concurrency` at a time; `onDone` sees each result as it finishes. Results keep the plan's order. */
async function runAll(plan, concurrency, runner, onDone) {
  const results = new Array(plan.length)
  let next = 0
  const worker = async () => {
    while (next < plan.length) {
      const i = next++
      results[i] = await runner(plan[i])
      onDone(results[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, plan.length) }, worker))
  return results
}

function gitDescription() {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'index.js', 'binding.js', 'Cargo.toml', 'Cargo.lock', 'conformance'], {
      cwd: ROOT,
      encoding: 'utf8',
    }).trim()
    return dirty ? `${sha} (with uncommitted changes)` : sha
  } catch {
    return 'unknown'
  }
}

/** Selects runs by `scenario` (each of its versions) or `scenario@version`. */
function select(runs, notApplicable, only) {
  if (only.length === 0) return runs
  for (const sel of only) {
    const [scenario, version] = sel.split('@')
    if (notApplicable.some((n) => n.scenario === scenario)) throw new HarnessError(`${scenario} is not applicable (see docs/conformance.md)`)
    if (!runs.some((r) => r.scenario === scenario && (!version || r.version === version))) {
      throw new HarnessError(`no run ${sel}; the runs are: ${runs.map((r) => `${r.scenario}@${r.version}`).join(', ')}`)
    }
  }
  return runs.filter((r) => only.some((sel) => {
    const [scenario, version] = sel.split('@')
    return r.scenario === scenario && (!version || r.version === version)
  }))
}

async function main() {
  const check = process.argv.includes('--check')
  const only = process.argv.slice(2).filter((a) => a !== '--check')
  const { node22, versionOf } = require(join(ROOT, 'scripts', 'node22.js'))
  const node22Path = node22()
  const node22Version = versionOf(node22Path)
  const clientNode = process.env.CONFORMANCE_CLIENT_NODE ?? process.execPath
  const clientNodeVersion = versionOf(clientNode)
  const version = suiteVersion()
  try {
    require(join(ROOT, 'index.js'))
  } catch (err) {
    throw new HarnessError(`cannot load the addon (${err.message}); run npm run build`)
  }
  const { runs, notApplicable, versions, requirements } = await loadPlan(node22Path)
  const expected = loadExpectedFailures(runs)
  const selected = select(runs, notApplicable, only)
  const clientCommand = `${shellQuote(clientNode)} ${shellQuote(CLIENT)}`
  const outRoot = mkdtempSync(join(tmpdir(), 'ahp-conformance-'))

  console.log(
    `${SUITE_PACKAGE} ${version}: ${selected.length} of ${runs.length} runs (${versions.join(', ')}), ${CONCURRENCY} at a time; ` +
      `suite on Node ${node22Version}, client on Node ${clientNodeVersion}`,
  )
  const started = Date.now()
  const results = await runAll(selected, CONCURRENCY, (p) => runOne(node22Path, clientCommand, outRoot, p), (r) => {
    const mark = r.status === 'broken' ? '!' : r.status === 'pass' ? '✓' : expected[r.version]?.[r.scenario] ? '✗ (expected)' : '✗'
    console.log(
      `${mark} ${r.version} ${r.scenario.padEnd(44)} ${String(r.passed).padStart(3)} passed ${String(r.failed).padStart(3)} failed ${String(r.warnings).padStart(3)} warnings  ${r.seconds.toFixed(1)}s  ${r.notes.join('; ')}`,
    )
  })
  const totalSeconds = (Date.now() - started) / 1000

  const sum = (k) => results.reduce((n, r) => n + r[k], 0)
  const passing = results.filter((r) => r.status === 'pass').length
  console.log(`\nconformance: ${passing} of ${results.length} runs pass; ${sum('passed')} checks passed, ${sum('failed')} failed (${sum('warnings')} warnings) in ${totalSeconds.toFixed(0)} s`)
  for (const [revision, set] of requirements) {
    const req = results.filter((r) => r.version === revision && r.category === 'required')
    if (req.length > 0) console.log(`${revision}: ${req.filter((r) => r.status === 'pass').length} of ${set.required.length} required client scenarios pass${req.length < set.required.length ? ` (${req.length} run)` : ''}`)
  }
  // Raw results are kept only for failed runs (or all with CONFORMANCE_KEEP=1).
  for (const r of results) {
    if (r.status === 'pass' && process.env.CONFORMANCE_KEEP !== '1') rmSync(r.outDir, { recursive: true, force: true })
  }
  if (results.some((r) => existsSync(r.outDir))) console.log(`raw results of the failed runs: ${outRoot}/<version>/<scenario>/`)
  else rmSync(outRoot, { recursive: true, force: true })

  // Only a full run without --check rewrites the tracked report.
  if (only.length === 0 && !check) {
    mkdirSync(dirname(DOC), { recursive: true })
    const host = `ahp-mcp-host ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}, commit ${gitDescription()}`
    writeFileSync(
      DOC,
      renderDoc({ suite: `\`${SUITE_PACKAGE}\` ${version}`, node22Version, clientNodeVersion, host, results, notApplicable, requirements, expected, totalSeconds, concurrency: CONCURRENCY }),
    )
    console.log(`wrote ${relative(ROOT, DOC)}`)
  } else {
    console.log(`(${check ? '--check' : 'a subset'} ran; ${relative(ROOT, DOC)} is written only by a full run without --check)`)
  }

  const broken = results.filter((r) => r.status === 'broken')
  if (broken.length > 0) {
    console.error(`harness error: no results for ${broken.map((r) => `${r.scenario}@${r.version} (${r.notes.join('; ')})`).join(', ')}`)
    return 1
  }
  if (check) {
    const unexpected = results.filter((r) => r.status === 'fail' && !expected[r.version]?.[r.scenario]).map((r) => `${r.scenario}@${r.version}`)
    const stale = results.filter((r) => r.status === 'pass' && expected[r.version]?.[r.scenario]).map((r) => `${r.scenario}@${r.version}`)
    if (unexpected.length > 0) console.error(`unexpected failures: ${unexpected.join(', ')}`)
    if (stale.length > 0) console.error(`listed as expected failures but passed (remove them from conformance/expected-failures.json): ${stale.join(', ')}`)
    if (unexpected.length > 0 || stale.length > 0) return 1
    console.log('conformance check: every run passed or is an expected failure with a written reason')
  }
  return 0
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof HarnessError ? `conformance harness: ${err.message}` : err?.stack ?? String(err))
    process.exit(1)
  },
)
