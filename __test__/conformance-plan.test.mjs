// conformance/plan.mjs: which (scenario, wire version) runs `npm run
// conformance` makes, from the suite's own listings (excerpts of the real
// output of @modelcontextprotocol/conformance 0.2.0-alpha.12).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseClientList, parseRequirements, planRuns } from '../conformance/plan.mjs'

const CLIENT_LIST = `Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - tools_call [2025-06-18,2025-11-25,2026-07-28]
  - elicitation-sep1034-client-defaults [2025-11-25]
  - request-metadata [2026-07-28]
  - auth/2025-03-26-oauth-metadata-backcompat [2025-03-26]
  - auth/dpop [extension]
  - json-schema-2020-12-preservation [2025-11-25,2026-07-28]
  - sep-2640-client-no-prefetch [extension]
`

const requirements = (required, extra = '') => `Required for X (n scenarios, frozen; run at the X wire):

Server scenarios (test against a server):
  - server-initialize
  - ping

Client scenarios (test against a client):
${required.map((s) => `  - ${s}`).join('\n')}

Run and reported, but never scored:
  extension (2):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  added-after-release (1):
    - json-schema-2020-12-preservation [client]
${extra}`

function plan() {
  return planRuns(
    parseClientList(CLIENT_LIST),
    new Map([
      ['2025-11-25', parseRequirements(requirements(['initialize', 'tools_call', 'elicitation-sep1034-client-defaults']))],
      ['2026-07-28', parseRequirements(requirements(['tools_call', 'request-metadata']))],
    ]),
  )
}

test('the requirement listing yields the client scenarios and the not-scored ones with their reason', () => {
  const set = parseRequirements(requirements(['tools_call', 'request-metadata']))
  assert.deepEqual(set.required, ['tools_call', 'request-metadata'])
  assert.deepEqual([...set.notScored], [['auth/dpop', 'extension'], ['json-schema-2020-12-preservation', 'added-after-release']])
})

test('a dated scenario runs at every wire version it applies to, required where the revision says so', () => {
  const runs = plan().runs.map((r) => `${r.scenario}@${r.version}:${r.category}${r.force ? ':force' : ''}`)
  assert.deepEqual(runs, [
    'auth/2025-03-26-oauth-metadata-backcompat@2025-03-26:back-compat',
    'initialize@2025-06-18:back-compat',
    'tools_call@2025-06-18:back-compat',
    'initialize@2025-11-25:required',
    'tools_call@2025-11-25:required',
    'elicitation-sep1034-client-defaults@2025-11-25:required',
    'json-schema-2020-12-preservation@2025-11-25:added-after-release',
    'auth/dpop@2025-11-25:extension:force',
    'tools_call@2026-07-28:required',
    'request-metadata@2026-07-28:required',
    'json-schema-2020-12-preservation@2026-07-28:added-after-release',
    'auth/dpop@2026-07-28:extension:force',
    'sep-2640-client-no-prefetch@2026-07-28:extension:force',
  ])
})

test('the skills scenarios run (the host implements SEP-2640); none is not applicable', () => {
  const { runs, notApplicable, versions } = plan()
  assert.deepEqual(notApplicable, [])
  assert.deepEqual(runs.filter((r) => r.scenario.startsWith('sep-2640-')).map((r) => `${r.version}:${r.category}`), ['2026-07-28:extension'])
  assert.deepEqual(versions, ['2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28'])
})

test('a required scenario the suite does not apply at its revision is a harness error', () => {
  const scenarios = parseClientList(CLIENT_LIST)
  const sets = new Map([['2026-07-28', parseRequirements(requirements(['initialize']))]])
  assert.throws(() => planRuns(scenarios, sets), /2026-07-28 requires initialize/)
})
