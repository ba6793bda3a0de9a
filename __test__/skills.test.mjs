// Skills (SEP-2640, `io.modelcontextprotocol/skills`): a server's skills
// listed at connect (every `skills/list` page, no file read), loaded on
// demand with every file checked against the entry's size and digest and
// SKILL.md's frontmatter against the entry's, and published to AHP clients
// as skill customizations. Real server: the official TypeScript SDK v2 with
// its `/ext/skills` extension (__test__/fixtures/skills-server.mjs), over
// stdio and Streamable HTTP.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { newHost, fixtureEntry, startHttpFixture, waitState, waitFor, rejectsWith, tmpDir, writePlugin, findCustomization } from './helpers/host.mjs'
import { replaySession } from './helpers/replay.mjs'

const SESSION = 'ahp-session:/skills'
const PDF = 'skill://pdf-processing/SKILL.md'
const FORMS = 'skill://pdf-processing/references/FORMS.md'
const LOGO = 'skill://pdf-processing/assets/logo.bin'
const REFUNDS = 'skill://acme/refunds/SKILL.md'
const DAILY = 'skill://reports/daily/SKILL.md'

/** The URIs the fixture read so far, in order. */
function reads(log) {
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []
}

/** Adds the skills fixture over `transport` with `env`; resolves its id once ready. */
async function addSkillsServer(t, host, transport, name, env = {}) {
  const config = transport === 'http'
    ? { type: 'streamable-http', url: (await startHttpFixture(t, 'skills-server.mjs', env, ['http'])).url }
    : { ...fixtureEntry('skills-server.mjs', ['stdio']), env }
  const id = await host.addServer({ name, config })
  await waitState(host, id, 'ready')
  return id
}

async function replayMatches(host, actions) {
  const pair = await waitFor(() => {
    const replayed = replaySession(actions, SESSION)
    const state = host.getState()
    return isDeepStrictEqual(replayed, state) ? { replayed, state } : undefined
  }, { what: 'the replayed actions to give the host state' })
  assert.deepEqual(pair.replayed, pair.state)
}

for (const transport of ['stdio', 'http']) {
  test(`${transport}: skills are listed at connect (every page), published, and nothing is read until a load`, async (t) => {
    const { host, actions } = newHost(t, { session: SESSION })
    const log = join(tmpDir(t), 'reads.log')
    const id = await addSkillsServer(t, host, transport, `docs-${transport}`, { SKILLS_READ_LOG: log })
    const listed = host.listSkills(id)
    assert.deepEqual(listed.map((s) => s.uri), [PDF, REFUNDS, DAILY])
    assert.deepEqual(listed.map((s) => s.serverId), [id, id, id])
    assert.equal(listed[1].frontmatter.license, 'Apache-2.0')
    assert.equal(listed[2].resources, 'dynamic')
    assert.ok(listed.every((s) => s.problem === undefined))
    assert.deepEqual(host.listSkills().map((s) => s.uri), [PDF, REFUNDS, DAILY])
    assert.deepEqual(reads(log), [], 'no skill file is read before a load')

    const container = findCustomization(host.getState(), `${id}/skills`)
    assert.equal(container.type, 'directory')
    assert.equal(container.contents, 'skill')
    assert.equal(container._meta['ahp-mcp-host/skillsOf'], id)
    assert.deepEqual(container.children.map((c) => [c.type, c.id, c.name, c.description, c.disableModelInvocation]), [
      ['skill', `${id}/skill:${PDF}`, 'pdf-processing', 'Extract, fill, and assemble PDF documents', undefined],
      ['skill', `${id}/skill:${REFUNDS}`, 'refunds', 'Process refund requests per policy', true],
    ])
    assert.deepEqual(container.children[0]._meta['ahp-mcp-host/skill'], { serverId: id, uri: PDF })

    const loaded = await host.loadSkill(id, PDF)
    assert.equal(loaded.serverId, id)
    assert.equal(loaded.name, 'pdf-processing')
    assert.deepEqual(loaded.frontmatter.metadata, { version: '2.1' })
    assert.deepEqual(loaded.files.map((f) => f.uri), [PDF, LOGO, FORMS], 'SKILL.md, then the manifest order')
    assert.deepEqual(reads(log), [PDF, LOGO, FORMS], 'SKILL.md first, then the listed files')
    assert.match(loaded.files[0].text, /^---\nname: pdf-processing/)
    const logo = Buffer.from(loaded.files[1].blob, 'base64')
    assert.deepEqual([...logo], [0, 1, 2, 250, 251, 252, 10, 13])
    assert.equal(loaded.files[1].digest, `sha256:${createHash('sha256').update(logo).digest('hex')}`)
    const refunds = await host.loadSkill(id, REFUNDS)
    assert.deepEqual(refunds.frontmatter.metadata, { owner: 'billing', tier: '2' })

    await rejectsWith(() => host.loadSkill(id, DAILY), 'not_supported')
    await replayMatches(host, actions)
  })

  for (const tamper of ['digest', 'size', 'frontmatter']) {
    test(`${transport}: a SKILL.md that fails its ${tamper} check fails the load, naming the file, and nothing else is read`, async (t) => {
      const { host } = newHost(t, { session: SESSION })
      const log = join(tmpDir(t), 'reads.log')
      const id = await addSkillsServer(t, host, transport, `bad-${tamper}`, { SKILLS_READ_LOG: log, SKILLS_TAMPER: tamper })
      const err = await rejectsWith(() => host.loadSkill(id, PDF), 'skill_verification_failed')
      assert.ok(err.message.includes(PDF), err.message)
      assert.deepEqual(err.data, { serverId: id, uri: PDF, file: PDF, reason: tamper })
      assert.deepEqual(reads(log), [PDF], 'no file is read after a bad SKILL.md')
      // Its sibling is untouched.
      assert.equal((await host.loadSkill(id, REFUNDS)).files.length, 1)
    })
  }
}

for (const transport of ['stdio', 'http']) {
  test(`${transport}: notifications/resources/list_changed re-lists the skills while connected, and the new one is published`, async (t) => {
    const { host, actions } = newHost(t, { session: SESSION })
    const id = await addSkillsServer(t, host, transport, 'docs')
    const hidden = 'skill://hidden/SKILL.md'
    assert.deepEqual(host.listSkills(id).map((s) => s.uri), [PDF, REFUNDS, DAILY])
    const result = await host.callTool({ serverId: id, name: 'list_hidden' })
    assert.equal(result.content[0].text, 'listed')
    await waitFor(() => host.listSkills(id).some((s) => s.uri === hidden), { what: 'the hidden skill listed after resources/list_changed' })
    assert.deepEqual(host.listSkills(id).map((s) => s.uri), [PDF, REFUNDS, DAILY, hidden])
    const container = findCustomization(host.getState(), `${id}/skills`)
    assert.ok(container.children.some((c) => c.id === `${id}/skill:${hidden}`), JSON.stringify(container.children.map((c) => c.id)))
    await replayMatches(host, actions)
  })
}

test('a skill absent from the listing is loaded through skills/get; an unknown one is not_found', async (t) => {
  const { host } = newHost(t, { session: SESSION })
  const id = await addSkillsServer(t, host, 'stdio', 'docs')
  const hidden = await host.loadSkill(id, 'skill://hidden/SKILL.md')
  assert.equal(hidden.name, 'hidden')
  assert.equal(hidden.files[0].text, '---\nname: hidden\ndescription: Served, never listed\n---\nHi.\n')
  const missing = 'skill://nowhere/SKILL.md'
  await rejectsWith(() => host.loadSkill(id, missing), 'not_found')
  await rejectsWith(() => host.loadSkill('nope', PDF), 'not_found')
  assert.throws(() => host.listSkills('nope'), (e) => e.code === 'not_found')
  assert.throws(() => host.listSkills(''), (e) => e.code === 'invalid_argument')
})

test('a plugin server\'s skills are children of its plugin; removing a top-level server removes its skills container', async (t) => {
  const { host, actions } = newHost(t, { session: SESSION })
  const root = writePlugin(join(tmpDir(t), 'plug'), { mcpServers: { docs: fixtureEntry('skills-server.mjs', ['stdio']) } })
  await host.addPlugin({ root, name: 'plug' })
  await waitState(host, 'plug/docs', 'ready')
  const plugin = findCustomization(host.getState(), 'plug')
  assert.deepEqual(plugin.children.map((c) => [c.type, c.id]), [
    ['mcpServer', 'plug/docs'],
    ['skill', `plug/docs/skill:${PDF}`],
    ['skill', `plug/docs/skill:${REFUNDS}`],
  ])
  assert.deepEqual(host.listSkills('plug/docs').map((s) => s.uri), [PDF, REFUNDS, DAILY])
  assert.equal((await host.loadSkill('plug/docs', PDF)).files.length, 3)

  const id = await addSkillsServer(t, host, 'stdio', 'top')
  assert.ok(findCustomization(host.getState(), `${id}/skills`))
  await host.remove(id)
  assert.equal(findCustomization(host.getState(), `${id}/skills`), undefined)
  assert.deepEqual(host.listSkills().map((s) => s.serverId), ['plug/docs', 'plug/docs', 'plug/docs'])
  await replayMatches(host, actions)
})
