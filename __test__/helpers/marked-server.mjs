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
