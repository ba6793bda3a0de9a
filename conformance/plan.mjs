// Which (scenario, wire version) runs `npm run conformance` makes, derived
// from what the pinned @modelcontextprotocol/conformance suite itself says:
//
//   conformance list --client                  every client scenario and the
//                                              wire versions it applies to,
//                                              e.g. `tools_call [2025-06-18,2025-11-25,2026-07-28]`
//                                              or `auth/dpop [extension]`
//   conformance list --requirements <revision> the client scenarios a spec
//                                              revision requires, and those it
//                                              runs but never scores (extension,
//                                              added-after-release)
//
// The rule (docs/conformance.md repeats it):
// - a dated scenario runs at EVERY wire version the suite lists for it; at a
//   requirement revision (2025-11-25, 2026-07-28) it is `required` when that
//   revision's set names it, else it takes the set's not-scored reason
//   (`added-after-release`); at an older version (2025-03-26, 2025-06-18) it
//   is `back-compat`;
// - an extension scenario runs (with --force, since the suite applies
//   extensions at no dated version) at every requirement revision whose set
//   reports it as `extension`; one that no set names runs at the newest
//   revision;
// - a scenario matching NOT_APPLICABLE is not run and is listed with the
//   reason (a required scenario can never be not applicable).

/** Scenarios the host cannot take part in, with the reason shown in docs/conformance.md. */
export const NOT_APPLICABLE = [
  // None. The `sep-2640-client-*` skills scenarios (SEP-2640) run since the
  // host implements the skills extension (issue 16): conformance/skills.mjs.
]

/** Parses `list --client`: [{name, tags}] with tags like ['2025-11-25', '2026-07-28'] or ['extension']. */
export function parseClientList(stdout) {
  const scenarios = []
  for (const m of stdout.matchAll(/^\s*-\s+(\S+)(?:\s+\[([^\]]*)\])?\s*$/gm)) {
    scenarios.push({ name: m[1], tags: (m[2] ?? '').split(',').map((t) => t.trim()).filter(Boolean) })
  }
  return scenarios
}

/** Parses `list --requirements <revision>`: {required: [client scenario], notScored: Map(scenario → reason)}. */
export function parseRequirements(stdout) {
  const required = []
  const notScored = new Map()
  let section = null
  let reason = null
  for (const line of stdout.split('\n')) {
    if (/^Client scenarios/.test(line)) section = 'client'
    else if (/^Server scenarios/.test(line)) section = 'server'
    else if (/^Run and reported, but never scored/.test(line)) section = 'notScored'
    else if (section === 'client' && /^\s*-\s+\S+/.test(line)) required.push(line.trim().slice(2).trim())
    else if (section === 'notScored') {
      const group = /^\s{2}(\S[^(]*?)\s*\(\d+\):\s*$/.exec(line)
      const item = /^\s{4}-\s+(\S+)\s+\[client\]\s*$/.exec(line)
      if (group) reason = group[1]
      else if (item) notScored.set(item[1], reason)
    }
  }
  return { required, notScored }
}

function notApplicableReason(name) {
  return NOT_APPLICABLE.find((n) => n.match.test(name))?.reason
}

/**
 * The run plan. `scenarios`: parseClientList output; `requirements`:
 * Map(revision → parseRequirements output), oldest first.
 * Returns {runs: [{scenario, version, category, force}], notApplicable: [{scenario, reason}], versions}.
 * Throws Error when the suite's own lists disagree (a required scenario the
 * suite does not apply at its revision, or one listed as not applicable).
 */
export function planRuns(scenarios, requirements) {
  const revisions = [...requirements.keys()]
  const newest = revisions[revisions.length - 1]
  const runs = []
  const notApplicable = []
  for (const { name, tags } of scenarios) {
    const reason = notApplicableReason(name)
    if (reason) {
      for (const [revision, set] of requirements) {
        if (set.required.includes(name)) throw new Error(`${name} is required by ${revision} but listed as not applicable`)
      }
      notApplicable.push({ scenario: name, reason })
      continue
    }
    if (tags.includes('extension')) {
      const at = revisions.filter((r) => requirements.get(r).notScored.get(name) === 'extension')
      for (const version of at.length > 0 ? at : [newest]) runs.push({ scenario: name, version, category: 'extension', force: true })
      continue
    }
    if (tags.length === 0) throw new Error(`the suite lists ${name} without wire versions`)
    for (const version of tags) {
      const set = requirements.get(version)
      const category = !set ? 'back-compat' : set.required.includes(name) ? 'required' : (set.notScored.get(name) ?? 'not in the requirement set')
      runs.push({ scenario: name, version, category, force: false })
    }
  }
  for (const [revision, set] of requirements) {
    for (const name of set.required) {
      if (!runs.some((r) => r.scenario === name && r.version === revision)) {
        throw new Error(`${revision} requires ${name}, but the suite does not list it for ${revision}`)
      }
    }
  }
  const versions = [...new Set(runs.map((r) => r.version))].sort()
  const order = { required: 0, 'added-after-release': 1, extension: 2 }
  runs.sort((a, b) => a.version.localeCompare(b.version) || (order[a.category] ?? 3) - (order[b.category] ?? 3))
  return { runs, notApplicable, versions }
}
