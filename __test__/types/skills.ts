// Type-checked by `npm test` (tsc --noEmit): the Skills extension (SEP-2640,
// issue 16) — `listSkills`, `loadSkill`, the skill customizations in the
// AHP state, compiled against index.d.ts.
import { McpHost, HostError, type SkillEntry, type LoadedSkill, type SkillCustomization } from '../../index.js'

async function skills(): Promise<void> {
  const host = new McpHost()
  const all: SkillEntry[] = host.listSkills()
  const mine: SkillEntry[] = host.listSkills('docs')
  for (const e of [...all, ...mine]) {
    const files = e.resources === 'dynamic' ? [] : e.resources.map((r) => `${r.uri} ${r.size} ${r.digest}`)
    console.log(e.serverId, e.uri, e.name, e.description, e.frontmatter.name, e.problem ?? '', files)
  }
  // @ts-expect-error the server id is a string
  host.listSkills(1)
  try {
    const loaded: LoadedSkill = await host.loadSkill('docs', 'skill://pdf/SKILL.md', { timeoutMs: 5_000 })
    for (const f of loaded.files) console.log(f.uri, f.size, f.digest, f.mimeType, f.text ?? f.blob)
  } catch (e) {
    if (e instanceof HostError && e.code === 'skill_verification_failed') console.log(e.message)
  }
  // @ts-expect-error loadSkill needs the skill's URI
  await host.loadSkill('docs')
  const published: SkillCustomization[] = []
  for (const c of host.getState().customizations ?? []) {
    if (c.type === 'directory') published.push(...(c.children ?? []))
    if (c.type === 'plugin') for (const child of c.children ?? []) if (child.type === 'skill') published.push(child)
  }
  for (const s of published) console.log(s.id, s.uri, s.name, s.description, s.disableModelInvocation, s._meta?.['ahp-mcp-host/skill']?.serverId)
}

void skills
