// The Mermaid diagrams of docs/guide/ stay true:
//   - the server lifecycle (supervision.md, `stateDiagram-v2`) has exactly the
//     `kind`s of the `McpServerState` union of index.d.ts as its states, each
//     entered and left; the phase table beside it lists exactly the variants
//     of the Rust `enum Phase` (found wherever it lives under src/), each
//     shown as one of those kinds (or "none");
//   - in the data flows (`sequenceDiagram`: a tool call in
//     tools-and-calls.md, a state change in supervision.md) every participant
//     but the two ends (`App`, your app; `Server`, the MCP server process) is
//     a name the code declares — a Rust struct/enum/trait/type/fn/mod under
//     src/ or binding/src/, a top-level folder, or a class of index.d.ts —
//     searched by name, not by file, so moving a file does not break it; each
//     flow has the layers it is about; every `Input::X` it names is a variant
//     of the Rust `enum Input`, and every `Effect(…)`-style step one of
//     `enum Effect`.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { ROOT } from './helpers/typecheck.mjs'

const require = createRequire(import.meta.url)
const ts = require('typescript')

const guide = (name) => readFileSync(join(ROOT, 'docs', 'guide', name), 'utf8')
const mermaid = (text) => [...text.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((m) => m[1])

/** Every .rs file under `dir`, recursively. */
function rustFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) return rustFiles(path)
    return entry.endsWith('.rs') ? [path] : []
  })
}
const RUST = [...rustFiles(join(ROOT, 'src')), ...rustFiles(join(ROOT, 'binding', 'src'))].map((f) => readFileSync(f, 'utf8'))
const DTS = readFileSync(join(ROOT, 'index.d.ts'), 'utf8')

/** The variants of the Rust `enum <name>` (declared once under src/). */
function rustVariants(name) {
  const bodies = RUST.flatMap((source) => [...source.matchAll(new RegExp(`^pub enum ${name} \\{\\n([\\s\\S]*?)^\\}`, 'gm'))].map((m) => m[1]))
  assert.equal(bodies.length, 1, `one \`pub enum ${name}\` under src/`)
  return [...bodies[0].matchAll(/^ {4}([A-Z]\w*)\b/gm)].map((m) => m[1])
}

/** The `kind`s of the `McpServerState` union of index.d.ts. */
function stateKinds() {
  const source = ts.createSourceFile('index.d.ts', DTS, ts.ScriptTarget.Latest, true)
  const byName = new Map(source.statements.filter((s) => s.name).map((s) => [s.name.text, s]))
  const union = byName.get('McpServerState')
  assert.ok(union && ts.isTypeAliasDeclaration(union) && ts.isUnionTypeNode(union.type), 'McpServerState is a union')
  return union.type.types.map((member) => {
    const decl = byName.get(member.typeName.getText(source))
    const kind = decl.members.find((m) => m.name?.getText(source) === 'kind')
    return kind.type.literal.text
  })
}

/** Whether the code declares `name`. */
function declared(name) {
  const rust = new RegExp(`\\b(struct|enum|trait|type|fn|mod) ${name}\\b`)
  return RUST.some((source) => rust.test(source))
    || new RegExp(`\\bclass ${name}\\b`).test(DTS)
    || (existsSync(join(ROOT, name)) && statSync(join(ROOT, name)).isDirectory())
}

const lifecycle = mermaid(guide('supervision.md')).filter((d) => d.startsWith('stateDiagram-v2\n'))

test('the lifecycle diagram\'s states are exactly the McpServerState kinds, each entered and left', () => {
  assert.equal(lifecycle.length, 1, 'supervision.md has one state diagram')
  const edges = [...lifecycle[0].matchAll(/^ {4}(\S+) --> (\S+?):/gm)].map((m) => [m[1], m[2]])
  assert.ok(edges.length >= 10, `${edges.length} transitions`)
  assert.equal(lifecycle[0].split('\n').filter((l) => l.includes('-->')).length, edges.length, 'every arrow has a label')
  const states = new Set(edges.flat().filter((s) => s !== '[*]'))
  const kinds = stateKinds()
  assert.deepEqual([...states].sort(), [...kinds].sort())
  for (const kind of kinds) {
    assert.ok(edges.some(([from, to]) => to === kind && from !== kind), `${kind} is entered`)
    assert.ok(edges.some(([from, to]) => from === kind && to !== kind), `${kind} is left`)
  }
  assert.ok(edges.some(([from, to]) => from === '[*]' && to === 'starting'), 'a server starts as starting')
})

test('the phase table lists exactly the variants of the Rust enum Phase, each shown as a McpServerState kind', () => {
  const text = guide('supervision.md')
  const rows = [...text.matchAll(/^\| `(\w+)` \| ([^|]+) \|/gm)]
  const kinds = stateKinds()
  assert.deepEqual(rows.map((r) => r[1]).sort(), rustVariants('Phase').sort())
  for (const [, phase, shown] of rows) {
    const named = [...shown.matchAll(/`(\w+)`/g)].map((m) => m[1])
    assert.ok(named.length > 0 || shown.trim() === 'none' || shown.trim() === 'unchanged', `${phase}: ${shown}`)
    for (const kind of named) assert.ok(kinds.includes(kind), `${phase} shows ${kind}, a McpServerState kind`)
  }
})

const flows = {
  'tools-and-calls.md': ['McpHost', 'binding', 'Host', 'ServerHandle', 'transport'],
  'supervision.md': ['transport', 'supervisor', 'phase', 'SessionStore', 'binding', 'McpHost'],
}

for (const [file, layers] of Object.entries(flows)) {
  test(`${file}: the data flow names only what the code declares, and its layers`, () => {
    const diagrams = mermaid(guide(file)).filter((d) => d.startsWith('sequenceDiagram\n'))
    assert.equal(diagrams.length, 1, `${file} has one sequence diagram`)
    const [flow] = diagrams
    const participants = [...flow.matchAll(/^ {4}participant (\w+) as /gm)].map((m) => m[1])
    assert.deepEqual(participants.filter((p) => p === 'App' || p === 'Server').sort(), ['App', 'Server'], 'your app and the server are the two ends')
    for (const name of participants) {
      if (name !== 'App' && name !== 'Server') assert.ok(declared(name), `${file}: the code declares ${name}`)
    }
    for (const layer of layers) assert.ok(participants.includes(layer), `${file}: the flow passes ${layer}`)
    const messages = [...flow.matchAll(/^ {4}(\w+)-(?:->>|>>)(\w+): (.*)$/gm)]
    assert.ok(messages.length >= 8, `${messages.length} messages`)
    for (const [line, from, to, text] of messages) {
      assert.ok(participants.includes(from) && participants.includes(to), `declared participants: ${line}`)
      for (const [, input] of text.matchAll(/Input::(\w+)/g)) assert.ok(rustVariants('Input').includes(input), `Input::${input} is a variant of enum Input`)
      for (const [, effect] of text.matchAll(/\b([A-Z]\w+)\(/g)) assert.ok(rustVariants('Effect').includes(effect), `${effect}(…) is a variant of enum Effect`)
    }
  })
}
