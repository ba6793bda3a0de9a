// The page of __test__/mirror-browser.test.mjs, bundled for the browser by
// esbuild: a UI keeping AHP state with the state mirror (lib/mirror.js) and
// the WebAssembly reducers (lib/reducers-wasm.js, the module fetched from
// the page's server), fed with envelopes by `window.postMessage`, as a
// webview receives them from its extension host. Its optimistic dispatches
// go out through `ahpPost` (a function the test exposes, standing for the
// webview's `postMessage` to the extension host).

import { loadReducers } from '../../lib/reducers-wasm.js'
import { AhpStateMirror } from '../../lib/mirror.js'

let mirror
const events = []

/** Loads the reducers, makes the mirror, listens for envelopes. */
window.ahpStart = async ({ session, clientId, snapshot }) => {
  const reducers = await loadReducers('ahp-reducers.wasm')
  mirror = new AhpStateMirror({ session, reducers, clientId, snapshot })
  for (const name of ['gap', 'duplicate', 'rejected', 'confirmed']) {
    mirror.on(name, (payload) => events.push({ event: name, ...payload }))
  }
  window.addEventListener('message', (e) => {
    if (e.source === window && e.data?.kind === 'ahp-envelope') mirror.receive(e.data.envelope)
  })
  return { wasmFromFetch: true }
}

/** An optimistic client action: applied at once, sent to the host through the relay. */
window.ahpDispatch = (channel, action) => {
  const sent = mirror.dispatch(channel, action)
  window.ahpPost({ ...sent, clientId: mirror.clientId })
  return { clientSeq: sent.clientSeq, pending: mirror.pending, session: mirror.session }
}

/** What the test compares: the mirror's view and what it reported. */
window.ahpView = () => ({ session: mirror.session, serverSeq: mirror.serverSeq, pending: mirror.pending, events })
