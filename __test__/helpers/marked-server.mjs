// A server entry whose processes are all findable by a marker string: an
// `sh -c` wrapper that starts a grandchild ignoring SIGTERM, then execs
// server-everything (stdio). Both the grandchild and the server carry the
// marker in their argv.

import { EVERYTHING, NODE } from './host.mjs'

export function markedEverythingConfig(marker) {
  const q = (s) => `'${s.replaceAll("'", `'\\''`)}'`
  const grandchild = `sh -c 'trap "" TERM; while :; do sleep 1; done' grandchild-${marker}`
  const script = `${grandchild} & exec ${q(NODE)} ${q(EVERYTHING)} stdio server-${marker}`
  return { type: 'stdio', command: 'sh', args: ['-c', script, `wrapper-${marker}`] }
}

/**
 * Like {@link markedEverythingConfig}, but the grandchild calls setsid()
 * first (`setsid(1)`: a new session and process group, as a browser an
 * automation server starts detached), so signalling the server's process
 * group does not reach it. Its parent (the server) stays alive; with
 * `orphaned`, its parent exits at once instead (a double fork), so no walk
 * of the server's tree can find it: only its inherited environment (the
 * host's process mark) ties it to the server.
 */
export function markedDetachedConfig(marker, { orphaned = false } = {}) {
  const q = (s) => `'${s.replaceAll("'", `'\\''`)}'`
  // `setsid -f`: setsid(1) forks, its child calls setsid() and execs, and
  // setsid(1) itself exits at once: a double fork, the grandchild
  // reparented to init (or a subreaper) before any walk of the tree.
  const setsid = orphaned ? 'setsid -f' : 'setsid'
  const grandchild = `${setsid} sh -c 'trap "" TERM; while :; do sleep 1; done' grandchild-${marker}`
  const script = `${grandchild} & exec ${q(NODE)} ${q(EVERYTHING)} stdio server-${marker}`
  return { type: 'stdio', command: 'sh', args: ['-c', script, `wrapper-${marker}`] }
}
