// Steps of the four SEP-2640 skills client scenarios of the conformance
// suite (sep-2640-client-no-prefetch, -verify-digest, -verify-size,
// -verify-frontmatter), through the host's public JS API only
// (`listSkills`, `loadSkill`; see conformance/client.mjs).
//
// - no-prefetch: the server declares the skills extension; the host lists
//   its skills when it connects and must read no skill file. The step
//   connects and reads the listing (`listSkills`), and loads nothing.
// - verify-*: the server's SKILL.md fails its entry's digest, size or
//   frontmatter; the step loads the listed skill (`loadSkill`), which must
//   reject `skill_verification_failed` without reading
//   references/FORMS.md (the suite checks the reads it served).

/**
 * The steps by scenario name. `connect(host)` adds the scenario's server as
 * `serverId` and waits for `ready`; `fail(message)` makes the step's error.
 */
export function skillSteps({ connect, serverId, log, fail }) {
  async function listed(host) {
    await connect(host)
    const skills = host.listSkills(serverId)
    log('skills:', skills.map((s) => `${s.uri}${s.problem ? ` (${s.problem})` : ''}`).join(', ') || '(none)')
    if (skills.length === 0) throw fail('the server listed no skill')
    return skills
  }
  async function noPrefetch(host) {
    await listed(host)
  }
  async function verify(host) {
    const [skill] = await listed(host)
    let loaded
    try {
      loaded = await host.loadSkill(serverId, skill.uri)
    } catch (err) {
      if (err.code !== 'skill_verification_failed') throw err
      log('load refused:', err.message)
      return
    }
    throw fail(`loaded ${skill.uri} (${loaded.files.length} files) although it fails verification`)
  }
  return {
    'sep-2640-client-no-prefetch': noPrefetch,
    'sep-2640-client-verify-digest': verify,
    'sep-2640-client-verify-size': verify,
    'sep-2640-client-verify-frontmatter': verify,
  }
}
