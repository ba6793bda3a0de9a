// Types of `ahp-mcp-host/mirror` (lib/mirror.js): the state mirror without
// the native addon; `reducers` is required (e.g. `loadReducers()` of
// `ahp-mcp-host/reducers-wasm`). See AhpStateMirror in index.d.ts.
import type { AhpStateMirror as MirrorWithDefaults, AhpStateMirrorOptions, AhpReducers } from '../index.js'

export type { AhpStateMirrorOptions, AhpStateMirrorEvents, AhpReducers, MirrorSnapshot, MirrorDispatch, ReduceResult, ReduceOutcome, ChatState, SessionState, StateAction } from '../index.js'

/** {@link MirrorWithDefaults} whose options must name the reducers. */
export declare class AhpStateMirror extends MirrorWithDefaults {
  constructor(options: AhpStateMirrorOptions & { reducers: AhpReducers })
}
