// Type usages of 'ahp-mcp-host/reducers-wasm' (lib/reducers-wasm.d.ts),
// checked by `npx tsc -p __test__/types`.
import { readFileSync } from 'node:fs'
import { loadReducers, type AhpReducers, type ReducersSource, type ReduceResult, type SessionState, type ChatState } from '../../lib/reducers-wasm.js'
import { AhpStateMirror } from '../../lib/mirror.js'

export async function wasmReducers(session: SessionState, chat: ChatState): Promise<string> {
  const fromDefault: AhpReducers = await loadReducers()
  const sources: ReducersSource[] = [readFileSync('lib/ahp-reducers.wasm'), new URL('file:///x/ahp-reducers.wasm'), 'lib/ahp-reducers.wasm', new ArrayBuffer(8)]
  const { reduceSession, reduceChat } = await loadReducers(sources[0])
  const s: ReduceResult<SessionState> = reduceSession(session, { type: 'session/titleChanged', title: 'T' })
  const c: ReduceResult<ChatState> = fromDefault.reduceChat(chat, { type: 'chat/titleChanged', title: 'C' })
  const outcome: 'applied' | 'noOp' | 'outOfScope' | 'invalid' = s.outcome
  const mirror = new AhpStateMirror({ session: 'ahp-session:/w', reducers: { reduceSession, reduceChat }, snapshot: { serverSeq: 0, session: s.state } })
  // @ts-expect-error a source is not null (omit it for the default)
  await loadReducers(null)
  return `${outcome} ${c.state.title} ${mirror.session.title} ${reduceChat(c.state, { type: 'x' }).error ?? ''}`
}
