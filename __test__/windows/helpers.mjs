// Helpers of the Windows suite (__test__/windows/*.win.mjs, run by Node for
// Windows: under Wine here, natively in the release workflow): the shared
// host helpers, a Windows process check, the Windows fixture server and
// `.cmd` shims written the way npm writes them.

import { writeFileSync, mkdirSync, readFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { NODE } from '../helpers/host.mjs'

export * from '../helpers/host.mjs'

const here = dirname(fileURLToPath(import.meta.url))
export const WIN_FIXTURES = join(here, 'fixtures')
export const WIN_SERVER = join(WIN_FIXTURES, 'win-server.mjs')

if (process.platform !== 'win32') throw new Error('the Windows suite runs in Node for Windows (npm run test:windows)')

/**
 * Whether this Node for Windows runs under Wine (its Z: drive is the Unix
 * root; Wine passes WINEPREFIX on): for the few places where Wine's
 * behaviour differs from Windows', named where they are used.
 */
export const UNDER_WINE = Boolean(process.env.WINEPREFIX) || existsSync('Z:\\proc\\self\\status')

const made = []
process.on('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 5 })
})

/**
 * A fresh temporary directory, removed when the test file's process exits.
 * Not at the end of the test as the shared helper does: Windows cannot
 * remove a folder that is a running process's working directory, and a
 * test's `after` hooks run in the order they were added, so the folder
 * would go before the host (and its servers) the test adds later.
 */
export function tmpDir(t, prefix = 'ahp-win-test-') {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Whether process `pid` runs (`process.kill(pid, 0)`: OpenProcess and its exit code on Windows). */
export function alive(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return e.code === 'EPERM'
  }
}

/** mcp.json stdio entry running the Windows fixture server with Node for Windows. */
export function winServerEntry(args = [], extra = {}) {
  return { type: 'stdio', command: NODE, args: [WIN_SERVER, ...args], ...extra }
}

/**
 * Writes `<dir>/<name>.cmd` running the fixture server as npm's shims run
 * their script (`"%~dp0\…" %*`: every argument passed on as cmd.exe got it),
 * plus `<dir>/<name>`, the POSIX shell twin npm writes beside it, which
 * Windows cannot run (so a search that takes it instead of the `.cmd` fails).
 */
export function writeShim(dir, name) {
  mkdirSync(dir, { recursive: true })
  const cmd = ['@ECHO off', 'SETLOCAL', `"${NODE}" "${WIN_SERVER}" %*`, ''].join('\r\n')
  writeFileSync(join(dir, `${name}.cmd`), cmd)
  writeFileSync(join(dir, name), `#!/bin/sh\nexec node "${WIN_SERVER}" "$@"\n`)
  return join(dir, `${name}.cmd`)
}

/** The pids the fixture server noted in its AHP_WIN_PIDS file: `{ servers, grandchildren }`. */
export function notedPids(file) {
  const lines = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []
  return {
    servers: lines.filter((l) => l.server).map((l) => l.server),
    grandchildren: lines.filter((l) => l.grandchild).map((l) => l.grandchild),
  }
}
