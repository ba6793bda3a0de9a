// Python MCP servers from PyPI for the JS tests: one virtual environment per
// pinned requirement set, made with `python3 -m venv` and `pip install` the
// first time a test asks for it and reused after (kept under the temp folder,
// keyed by the requirements, made under a temporary name and renamed into
// place only once pip succeeded).

import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, renameSync, writeFileSync, rmSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const PY_FIXTURES = join(here, '..', 'fixtures', 'python')

/** fastmcp 4 (on `mcp` 2.x): speaks MCP 2026-07-28. */
export const FASTMCP_4 = ['fastmcp==4.2.3']
/** The official Python SDK 1.x: 2025-era `initialize` only. */
export const MCP_1 = ['mcp==1.30.0']

/**
 * The Python interpreter of a virtual environment holding `requirements`
 * (pip specifiers), made on first use (pip may take a minute: call it
 * before the test's own timeouts start).
 */
export function pythonWith(requirements) {
  const key = createHash('sha256').update(requirements.join('\n')).digest('hex').slice(0, 16)
  const venv = join(tmpdir(), 'ahp-mcp-host-test-venvs', key)
  const python = join(venv, 'bin', 'python')
  if (existsSync(join(venv, '.installed'))) return python
  // Made beside it under a name of this process, then renamed into place, so
  // two suites on one machine (two clones, CI beside a contributor) never
  // see or remove each other's half-made environment.
  const making = `${venv}.making-${process.pid}`
  rmSync(making, { recursive: true, force: true })
  mkdirSync(dirname(venv), { recursive: true })
  execFileSync('python3', ['-m', 'venv', making], { stdio: ['ignore', 'ignore', 'inherit'] })
  execFileSync(join(making, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', ...requirements], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 600_000,
  })
  writeFileSync(join(making, '.installed'), requirements.join('\n'))
  try {
    renameSync(making, venv)
  } catch (err) {
    if (!existsSync(join(venv, '.installed'))) {
      // An unfinished one left by a killed run: moved aside (atomic), then ours.
      const stale = `${venv}.stale-${process.pid}`
      renameSync(venv, stale)
      rmSync(stale, { recursive: true, force: true })
      renameSync(making, venv)
      return python
    }
    if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err
    rmSync(making, { recursive: true, force: true }) // another suite finished first
  }
  return python
}

/** An mcp.json stdio entry running `script` (in fixtures/python) with `python`. */
export function pythonEntry(python, script, extra = {}) {
  return { type: 'stdio', command: python, args: [join(PY_FIXTURES, script)], ...extra }
}
