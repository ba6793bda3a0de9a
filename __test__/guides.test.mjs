// The guides (docs/guide/*.md) hold the manual that used to be the README.
// Their TypeScript is real: every ```ts block of every guide is type-checked
// with `tsc --strict` against index.d.ts (and the pinned @types/vscode), the
// way readme.test.mjs checks the README's (helpers/typecheck.mjs). And their
// links work: every relative link of README.md and of the guides names a
// file that exists and, for a `#anchor` into Markdown, a heading of that
// file (GitHub's anchors). Links into the generated API reference
// (target/api-docs/) are checked by api-docs.test.mjs.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { ROOT, tsBlocksOf, makeApp, assertTypeChecks } from './helpers/typecheck.mjs'

const GUIDES = join(ROOT, 'docs', 'guide')
const guides = readdirSync(GUIDES).filter((f) => f.endsWith('.md')).sort()
const text = (file) => readFileSync(file, 'utf8')

test('the guides are there, the README links each of them, and the README stays short', () => {
  const readme = text(join(ROOT, 'README.md'))
  const lines = readme.split('\n').length - 1
  assert.ok(lines <= 250, `README.md has ${lines} lines: the manual belongs in docs/guide/ (at most 250 in the README)`)
  assert.ok(guides.length >= 11, guides.join(', '))
  for (const guide of guides) assert.ok(readme.includes(`](docs/guide/${guide})`), `README links docs/guide/${guide}`)
})

test('every TypeScript block of docs/guide/*.md type-checks with tsc --strict', async (t) => {
  const blocks = []
  for (const guide of guides) {
    tsBlocksOf(text(join(GUIDES, guide))).forEach((code, i) => {
      blocks.push({ file: `${guide.replace(/\.md$/, '')}-${i + 1}.mts`, code })
    })
  }
  // The guides that hold the README's former type-checked sections (and the MCP Apps wiring) keep TypeScript.
  for (const guide of ['tools-and-calls', 'electron-vscode', 'mcp-apps']) {
    assert.ok(blocks.some((b) => b.file.startsWith(`${guide}-`)), `docs/guide/${guide}.md has a ts block`)
  }
  await assertTypeChecks(makeApp(t, 'ahp-mcp-host-guides-'), blocks, 'the guides')
})

/** GitHub's anchors of the headings of Markdown `source` (duplicates get -1, -2, …). */
function anchors(source) {
  const seen = new Map()
  const out = new Set()
  const body = source.replace(/^```[\s\S]*?^```$/gm, '')
  for (const [, heading] of body.matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-')
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    out.add(n === 0 ? slug : `${slug}-${n}`)
  }
  return out
}

test('every relative link of README.md and docs/guide/*.md resolves, anchors included', () => {
  const files = [join(ROOT, 'README.md'), ...guides.map((g) => join(GUIDES, g))]
  let checked = 0
  for (const file of files) {
    const body = text(file).replace(/^```[\s\S]*?^```$/gm, '')
    for (const [, target] of body.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target) || target.startsWith('target/api-docs/')) continue
      const [path, anchor] = target.split('#')
      const dest = path === '' ? file : join(dirname(file), path)
      const where = `${relative(ROOT, file)}: ${target}`
      assert.ok(existsSync(dest), `${where}: no such file`)
      if (anchor !== undefined) {
        assert.ok(statSync(dest).isFile() && dest.endsWith('.md'), `${where}: an anchor into a non-Markdown file`)
        assert.ok(anchors(text(dest)).has(anchor), `${where}: no heading with that anchor in ${relative(ROOT, dest)}`)
      }
      checked++
    }
  }
  assert.ok(checked > 30, `only ${checked} links checked`)
})
