// The benchmark server and the specs the drivers get, shared by
// `npm run bench` (bench/run.mjs) and the PGO training of the release addon
// (scripts/pgo-train.mjs): one place says how a run of bench/figures.mjs
// becomes the JSON spec of bench/driver.mjs (and of the floor client).

import { spawn } from 'node:child_process'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

const HERE = dirname(fileURLToPath(import.meta.url))
/** The benchmark MCP server (official SDK v1 low-level `Server`). */
export const SERVER = join(HERE, 'server.mjs')
/** One measurement of one client in its own process. */
export const DRIVER = join(HERE, 'driver.mjs')
const NODE = process.execPath
/** How long the HTTP server may take to print its port (ms). */
const HTTP_START_MS = 15_000

/** The environment the SDK's StdioClientTransport passes by default; Bt gets the same. */
export function defaultEnv() {
  const keys = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']
  return Object.fromEntries(keys.filter((k) => process.env[k] && !process.env[k].startsWith('()')).map((k) => [k, process.env[k]]))
}

/**
 * Starts the Streamable HTTP benchmark server on a free loopback port;
 * `marker` goes on its command line (a run finds its leftovers by it).
 * Resolves to `{ base, stop }`; `children` (a Set) holds the process until
 * it exits.
 */
export async function startHttpServer(marker, children) {
  const child = spawn(NODE, [SERVER, 'http', marker], { stdio: ['pipe', 'pipe', 'inherit'] })
  children.add(child)
  child.once('exit', () => children.delete(child))
  const port = await new Promise((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => reject(new Error(`HTTP bench server did not start within ${HTTP_START_MS / 1000} s`)), HTTP_START_MS)
    child.stdout.on('data', (d) => {
      const m = /PORT (\d+)/.exec((buf += d))
      if (m) {
        clearTimeout(timer)
        resolve(Number(m[1]))
      }
    })
    child.once('exit', (code) => reject(new Error(`HTTP bench server exited early (${code})`)))
  })
  return { base: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') }
}

/** The spec a driver gets for `run` (bench/driver.mjs documents it); `http` from startHttpServer. */
export function specFor(run, http, marker) {
  const { id, once, skipQuick, extra, server, ...counts } = run
  const large = server === 'large'
  const target = run.transport === 'stdio'
    ? { command: NODE, args: [SERVER, 'stdio', ...(large ? ['--tools', '1000'] : []), marker], env: defaultEnv() }
    : { url: `${http.base}/${large ? 'mcp-1000' : 'mcp'}` }
  return { ...counts, tools: run.tools ?? (large ? 1003 : 3), ...target }
}
