// Headless Chromium for the browser tests: launched, or the subtest skipped
// with the reason, unless AHP_REQUIRE_CHROMIUM=1 (.ci/run sets it once
// Chromium is installed), which makes a browser that does not start a failure.

import { launchChromium } from '../../examples/mcp-apps/host-page.mjs'

/** The launched browser, or `undefined` after `st.skip(reason)`. */
export async function launchOrSkip(st) {
  try {
    return await launchChromium()
  } catch (err) {
    if (process.env.AHP_REQUIRE_CHROMIUM === '1') throw err
    st.skip(`no browser: ${err.message}`)
    return undefined
  }
}
