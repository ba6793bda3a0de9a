// The API reference (`npm run docs`: TypeDoc over index.d.ts, typedoc.json,
// into target/api-docs/) and the README's "API at a glance" agree with
// index.d.ts:
//   - the table lists every member of `McpHost` and every event of
//     `McpHostEvents`, each once, and nothing else: a member added to the
//     class but not to the table fails here;
//   - TypeDoc builds the reference without a warning (typedoc.json makes
//     warnings, broken or invalid links and not-exported references errors),
//     and every link of the README into target/api-docs/ names a page it
//     wrote and, with an anchor, the heading of that very member;
//   - index.d.ts opens with McpHost, McpHostEvents, McpHostOptions, HostLimits.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { ROOT, run } from './helpers/typecheck.mjs'

const require = createRequire(import.meta.url)
const ts = require('typescript')

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const API_DOCS = 'target/api-docs/'

/** The declarations of index.d.ts, parsed by TypeScript. */
function declarations() {
  const source = ts.createSourceFile('index.d.ts', readFileSync(join(ROOT, 'index.d.ts'), 'utf8'), ts.ScriptTarget.Latest, true)
  const byName = new Map(source.statements.filter((s) => s.name).map((s) => [s.name.text, s]))
  const nameOf = (member) => {
    if (ts.isConstructorDeclaration(member)) return 'constructor'
    if (ts.isComputedPropertyName(member.name)) return `[${member.name.expression.getText(source)}]`
    return member.name.getText(source)
  }
  const host = byName.get('McpHost')
  const events = byName.get('McpHostEvents')
  assert.ok(host && ts.isClassDeclaration(host), 'index.d.ts declares class McpHost')
  assert.ok(events && ts.isInterfaceDeclaration(events), 'index.d.ts declares interface McpHostEvents')
  return {
    members: [...new Set(host.members.map(nameOf))], // overloads once
    events: events.members.map(nameOf),
  }
}

/** The rows of the README table whose header starts with `| <first> |`: [{name, href}] from `[\`name\`](href)`. */
function tableRows(first) {
  const start = README.indexOf(`\n| ${first} |`)
  assert.ok(start >= 0, `README has a table headed "${first}"`)
  const lines = README.slice(start + 1).split('\n')
  const rows = []
  for (const line of lines.slice(2)) {
    if (!line.startsWith('|')) break
    const m = /^\| \[`([^`]+)`\]\(([^)]+)\) \|/.exec(line)
    assert.ok(m, `a row that names one member, linked: ${line}`)
    rows.push({ name: m[1], href: m[2] })
  }
  return rows
}

const section = README.slice(README.indexOf('\n## API at a glance\n'))
const memberRows = tableRows('Member')
const eventRows = tableRows('Event')

test('the README API table lists every McpHost member and McpHostEvents event, once each', () => {
  assert.ok(section.length > 1 && section.indexOf('| Member |') < section.indexOf('\n## ', 1), 'the tables are in "API at a glance"')
  const { members, events } = declarations()
  assert.ok(members.length >= 35 && members.includes('callTool') && members.includes('[Symbol.asyncDispose]'), members.join())
  const listed = memberRows.map((r) => r.name)
  assert.equal(new Set(listed).size, listed.length, `a member listed twice: ${listed}`)
  assert.deepEqual([...listed].sort(), [...members].sort(), 'the member table = the members of class McpHost')
  const listedEvents = eventRows.map((r) => r.name)
  assert.deepEqual([...listedEvents].sort(), [...events].sort(), 'the event table = the events of McpHostEvents')
  for (const { href } of [...memberRows, ...eventRows]) assert.ok(href.startsWith(API_DOCS), `links into ${API_DOCS}: ${href}`)
})

test('index.d.ts opens with McpHost, its events and its options, the way a reader meets them', () => {
  const source = ts.createSourceFile('index.d.ts', readFileSync(join(ROOT, 'index.d.ts'), 'utf8'), ts.ScriptTarget.Latest, true)
  const first = source.statements.filter((s) => s.name).slice(0, 4).map((s) => s.name.text)
  assert.deepEqual(first, ['McpHost', 'McpHostEvents', 'McpHostOptions', 'HostLimits'])
})

test('TypeDoc builds the reference without warnings, and every README link into it names a page and the member\'s heading', async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'ahp-mcp-host-api-docs-'))
  t.after(() => rmSync(out, { recursive: true, force: true }))
  const built = await run([join(ROOT, 'node_modules', 'typedoc', 'bin', 'typedoc'), '--out', out], ROOT)
  assert.equal(built.code, 0, `typedoc (typedoc.json, warnings are errors):\n${built.stdout}${built.stderr}`)

  const rows = [...memberRows, ...eventRows]
  assert.equal(new Set(rows.map((r) => r.href)).size, rows.length, 'each table row links a page or anchor of its own')
  // Every link into the reference (the table's, and the README's other ones such as HostErrorCode).
  const named = new Map(rows.map((r) => [r.href, r.name]))
  const links = [...new Set([...README.matchAll(/\]\((target\/api-docs\/[^)\s]+)\)/g)].map((m) => m[1]))]
  assert.ok(links.length > rows.length, `${links.length} links into the reference`)
  const pages = new Map()
  for (const href of links) {
    const [page, anchor] = href.slice(API_DOCS.length).split('#')
    const file = join(out, page)
    assert.ok(existsSync(file), `${href}: TypeDoc wrote no ${page}`)
    if (anchor === undefined) continue
    if (!pages.has(file)) pages.set(file, readFileSync(file, 'utf8'))
    const heading = new RegExp(`<h3 class="tsd-anchor-link" id="${anchor}">(.*?)<a `).exec(pages.get(file))
    assert.ok(heading, `${href}: no member heading with id "${anchor}" on ${page}`)
    const shown = heading[1].replace(/<code class="tsd-tag">[^<]*<\/code>/g, '').replace(/<[^>]+>/g, '').trim()
    const name = named.get(href)
    assert.ok(name, `${href}: an anchor link outside the API table`)
    assert.equal(shown, name.replace(/^\[Symbol\.(\w+)\]$/, '[$1]'), `${href} is the heading of ${name}`)
  }
})
