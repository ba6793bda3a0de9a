// The upstream AHP reducer fixtures (tests/fixtures/ahp/, see its README)
// for the JS reducer tests, with the comparison rule of tests/ahp_fixtures.rs.

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The fixtures' folder. */
export const FIXTURES = join(import.meta.dirname, '..', '..', 'tests', 'fixtures', 'ahp')

/** As tests/ahp_fixtures.rs: a missing or extra fixture file fails. */
export const EXPECTED_FIXTURES = 60

/** The fixture file names, sorted. */
export const fixtureFiles = () => readdirSync(FIXTURES).filter((f) => f.endsWith('.json')).sort()

/** One fixture file, parsed: `{reducer: 'session' | 'chat', initial, actions, expected, …}`. */
export const readFixture = (file) => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'))

/** Drops every object key whose value is null, recursively (array items that are null stay). */
export function stripNulls(v) {
  if (Array.isArray(v)) return v.map(stripNulls)
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, stripNulls(x)]))
  }
  return v
}
