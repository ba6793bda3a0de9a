// Resources and prompts: listResources, listResourceTemplates, readResource,
// listPrompts and getPrompt against server-everything over stdio (exact
// values from its source), their errors (unknown uri / prompt / server),
// the size bounds maxListItems, maxListPages and maxResultBytes, full
// pagination with a purpose-written paginating server, and the 'listChanged'
// event.
//
// server-everything (this version) serves one static resource per file of its
// dist/docs directory (`demo://resource/static/document/<encoded name>`,
// text/markdown for .md), two resource templates (dynamic text and blob
// resources by positive integer id), and four prompts. Its SDK McpServer lists
// resources in one page, and sends notifications/resources/list_changed when a
// resource is registered at runtime (the gzip-file-as-resource tool does so).

import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, dirname } from 'node:path'
import { pathToFileURL } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { newHost, everythingEntry, waitState, waitFor, tmpDir, HostError, EVERYTHING, FIXTURES, NODE, rejectsWith } from './helpers/host.mjs'

const DOCS = join(dirname(EVERYTHING), 'docs')
const DOC_FILES = readdirSync(DOCS).sort()
const docUri = (file) => `demo://resource/static/document/${encodeURIComponent(file)}`

async function addEverything(host, name = 'every') {
  const id = await host.addServer({ name, config: everythingEntry() })
  await waitState(host, id, 'ready')
  return id
}


test('listResources: every static document of server-everything, unique uris', async (t) => {
  // The source registers one resource per file of dist/docs; seven files in this version.
  assert.equal(DOC_FILES.length, 7, `docs: ${DOC_FILES}`)
  const { host } = newHost(t)
  const id = await addEverything(host)
  const resources = await host.listResources(id)
  assert.equal(resources.length, DOC_FILES.length)
  assert.equal(new Set(resources.map((r) => r.uri)).size, resources.length, 'uris are unique')
  assert.deepEqual(resources.map((r) => r.uri).sort(), DOC_FILES.map(docUri).sort())
  for (const r of resources) {
    const file = decodeURIComponent(r.uri.slice('demo://resource/static/document/'.length))
    assert.equal(r.name, file)
    assert.equal(r.mimeType, file.endsWith('.md') ? 'text/markdown' : 'text/plain')
    assert.equal(r.description, `Static document file exposed from /docs: ${file}`)
  }
})

test('listResourceTemplates: the dynamic text and blob templates', async (t) => {
  const { host } = newHost(t)
  const id = await addEverything(host)
  const templates = (await host.listResourceTemplates(id)).sort((a, b) => a.name.localeCompare(b.name))
  assert.deepEqual(templates.map(({ uriTemplate, name, mimeType }) => ({ uriTemplate, name, mimeType })), [
    { uriTemplate: 'demo://resource/dynamic/blob/{resourceId}', name: 'Dynamic Blob Resource', mimeType: 'application/octet-stream' },
    { uriTemplate: 'demo://resource/dynamic/text/{resourceId}', name: 'Dynamic Text Resource', mimeType: 'text/plain' },
  ])
})

test('readResource: a static text document, a dynamic text and a dynamic blob resource', async (t) => {
  const { host } = newHost(t)
  const id = await addEverything(host)

  const doc = await host.readResource(id, docUri('architecture.md'))
  assert.equal(doc.contents.length, 1)
  assert.deepEqual(doc.contents[0], {
    uri: docUri('architecture.md'),
    mimeType: 'text/markdown',
    text: readFileSync(join(DOCS, 'architecture.md'), 'utf8'),
  })

  const text = await host.readResource(id, 'demo://resource/dynamic/text/3')
  assert.equal(text.contents.length, 1)
  assert.equal(text.contents[0].uri, 'demo://resource/dynamic/text/3')
  assert.equal(text.contents[0].mimeType, 'text/plain')
  assert.match(text.contents[0].text, /^Resource 3: This is a plaintext resource created at \S/)
  assert.ok(!('blob' in text.contents[0]))

  const blob = await host.readResource(id, 'demo://resource/dynamic/blob/4')
  assert.equal(blob.contents.length, 1)
  assert.equal(blob.contents[0].uri, 'demo://resource/dynamic/blob/4')
  assert.ok(!('text' in blob.contents[0]))
  assert.match(blob.contents[0].blob, /^[A-Za-z0-9+/]+=*$/)
  assert.match(Buffer.from(blob.contents[0].blob, 'base64').toString('utf8'), /^Resource 4: This is a base64 blob created at \S/)
})

test('readResource of an unknown uri rejects with protocol_error and the JSON-RPC code', async (t) => {
  const { host } = newHost(t)
  const id = await addEverything(host)
  const err = await rejectsWith(() => host.readResource(id, 'demo://resource/no/such/thing'), 'protocol_error')
  assert.equal(typeof err.data.code, 'number')
  // The SDK's McpServer answers an unmatched uri with InvalidParams.
  assert.equal(err.data.code, -32602)
  // The MCP server's JSON-RPC code stays in data; rpcCode is only for AHP errors.
  assert.equal(err.rpcCode, undefined)
  assert.match(err.message, /demo:\/\/resource\/no\/such\/thing/)
  // The server is still fine.
  assert.equal((await host.listResources(id)).length, DOC_FILES.length)
})

test('listPrompts and getPrompt with arguments', async (t) => {
  const { host } = newHost(t)
  const id = await addEverything(host)
  const prompts = await host.listPrompts(id)
  assert.deepEqual(prompts.map((p) => p.name).sort(), ['args-prompt', 'completable-prompt', 'resource-prompt', 'simple-prompt'])
  const args = prompts.find((p) => p.name === 'args-prompt')
  assert.equal(args.title, 'Arguments Prompt')
  assert.deepEqual(args.arguments.map(({ name, required }) => ({ name, required: required ?? false })), [
    { name: 'city', required: true },
    { name: 'state', required: false },
  ])
  assert.equal(prompts.find((p) => p.name === 'simple-prompt').arguments, undefined)

  const simple = await host.getPrompt(id, 'simple-prompt')
  assert.deepEqual(simple.messages, [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt without arguments.' } }])

  const weather = await host.getPrompt(id, 'args-prompt', { city: 'Zürich', state: 'ZH' })
  assert.deepEqual(weather.messages, [{ role: 'user', content: { type: 'text', text: "What's weather in Zürich, ZH?" } }])
  const cityOnly = await host.getPrompt(id, 'args-prompt', { city: 'Lyon' })
  assert.deepEqual(cityOnly.messages, [{ role: 'user', content: { type: 'text', text: "What's weather in Lyon?" } }])

  const team = await host.getPrompt(id, 'completable-prompt', { department: 'Sales', name: 'Eve' })
  assert.deepEqual(team.messages, [{ role: 'user', content: { type: 'text', text: 'Please promote Eve to the head of the Sales team.' } }])

  const withResource = await host.getPrompt(id, 'resource-prompt', { resourceType: 'Blob', resourceId: '2' })
  assert.equal(withResource.messages.length, 2)
  assert.deepEqual(withResource.messages[0], {
    role: 'user',
    content: { type: 'text', text: 'This prompt includes the Blob resource with id: 2. Please analyze the following resource:' },
  })
  const embedded = withResource.messages[1].content
  assert.equal(embedded.type, 'resource')
  assert.equal(embedded.resource.uri, 'demo://resource/dynamic/blob/2')
  assert.match(Buffer.from(embedded.resource.blob, 'base64').toString('utf8'), /^Resource 2: This is a base64 blob created at /)
})

test('getPrompt errors: an unknown prompt and a missing required argument reject with protocol_error', async (t) => {
  const { host } = newHost(t)
  const id = await addEverything(host)
  const unknown = await rejectsWith(() => host.getPrompt(id, 'no-such-prompt'), 'protocol_error')
  assert.equal(unknown.data.code, -32602)
  assert.match(unknown.message, /no-such-prompt/)
  const missing = await rejectsWith(() => host.getPrompt(id, 'args-prompt', { state: 'ZH' }), 'protocol_error')
  assert.equal(missing.data.code, -32602)
  // Still usable.
  assert.equal((await host.getPrompt(id, 'args-prompt', { city: 'Bern' })).messages[0].content.text, "What's weather in Bern?")
})

test('resources and prompts of an unknown server reject with not_found', async (t) => {
  const { host } = newHost(t)
  await addEverything(host)
  await rejectsWith(() => host.listResources('nope'), 'not_found')
  await rejectsWith(() => host.listResourceTemplates('nope'), 'not_found')
  await rejectsWith(() => host.readResource('nope', docUri('architecture.md')), 'not_found')
  await rejectsWith(() => host.listPrompts('nope'), 'not_found')
  await rejectsWith(() => host.getPrompt('nope', 'simple-prompt'), 'not_found')
})

test('maxListItems: a resource list over the bound rejects with limit_exceeded; shorter lists work', async (t) => {
  const { host } = newHost(t, { limits: { maxListItems: 5 } })
  const id = await addEverything(host)
  const err = await rejectsWith(() => host.listResources(id), 'limit_exceeded')
  assert.ok(err.message.includes('more than maxListItems (5) items'), err.message)
  assert.ok(err.message.includes(id), `names the server: ${err.message}`)
  // Two templates and four prompts are within the bound.
  assert.equal((await host.listResourceTemplates(id)).length, 2)
  assert.equal((await host.listPrompts(id)).length, 4)
})

test('maxResultBytes: reading a larger resource rejects with limit_exceeded; a small one is read', async (t) => {
  const { host } = newHost(t, { limits: { maxResultBytes: 200 } })
  const id = await addEverything(host)
  assert.ok(readFileSync(join(DOCS, 'features.md')).length > 200)
  const err = await rejectsWith(() => host.readResource(id, docUri('features.md')), 'limit_exceeded')
  assert.match(err.message, /maxResultBytes/)
  assert.ok(err.message.includes('200'), err.message)
  // {"contents":[{"uri":"demo://resource/dynamic/text/1","mimeType":"text/plain","text":"Resource 1: …"}]} stays under 200 bytes.
  const small = await host.readResource(id, 'demo://resource/dynamic/text/1')
  assert.match(small.contents[0].text, /^Resource 1: /)
})

test("listChanged: a resource registered at runtime emits {list: 'resources'} and is then listed and readable", async (t) => {
  const { host } = newHost(t)
  const id = await addEverything(host)
  const events = []
  host.on('listChanged', (e) => events.push(e))

  const payload = 'hello gzip resource\n'.repeat(3)
  const r = await host.callTool({
    serverId: id,
    name: 'gzip-file-as-resource',
    arguments: { name: 'hello.txt.gz', data: `data:text/plain;base64,${Buffer.from(payload).toString('base64')}`, outputType: 'resourceLink' },
  })
  assert.ok(!r.isError, JSON.stringify(r))
  assert.equal(r.content[0].type, 'resource_link')
  assert.equal(r.content[0].uri, 'demo://resource/session/hello.txt.gz')

  await waitFor(() => events.length >= 1, { what: 'listChanged event' })
  assert.deepEqual(events[0], { serverId: id, list: 'resources' })
  assert.ok(events.every((e) => e.serverId === id && e.list === 'resources'), JSON.stringify(events))

  const resources = await host.listResources(id)
  assert.equal(resources.length, DOC_FILES.length + 1)
  const added = resources.find((x) => x.uri === 'demo://resource/session/hello.txt.gz')
  assert.equal(added.name, 'hello.txt.gz')
  assert.equal(added.mimeType, 'application/gzip')

  const read = await host.readResource(id, 'demo://resource/session/hello.txt.gz')
  assert.equal(read.contents[0].mimeType, 'application/gzip')
  assert.equal(gunzipSync(Buffer.from(read.contents[0].blob, 'base64')).toString('utf8'), payload)
})

// A raw-JSON-RPC server listing 23 resources, 7 templates and 11 prompts, four
// per page, logging each page request on stderr; tool `notify` sends
// notifications/<list>/list_changed.
const PAGED_SERVER = `
import { serve, RpcError } from ${JSON.stringify(pathToFileURL(join(FIXTURES, 'raw-stdio.mjs')).href)}
const PAGE = 4
const lists = {
  'resources/list': ['resources', Array.from({ length: 23 }, (_, i) => ({ uri: 'test://r/' + i, name: 'r' + i, mimeType: 'text/plain' }))],
  'resources/templates/list': ['resourceTemplates', Array.from({ length: 7 }, (_, i) => ({ uriTemplate: 'test://t' + i + '/{id}', name: 't' + i }))],
  'prompts/list': ['prompts', Array.from({ length: 11 }, (_, i) => ({ name: 'p' + i }))],
}
const methods = {
  initialize: (p) => ({
    protocolVersion: p.protocolVersion ?? '2025-11-25',
    capabilities: { tools: {}, resources: { listChanged: true }, prompts: { listChanged: true } },
    serverInfo: { name: 'paged', version: '1.0.0' },
  }),
  'tools/list': () => ({ tools: [{ name: 'notify', inputSchema: { type: 'object', properties: { list: { type: 'string' } } } }] }),
  'tools/call': (params) => {
    const list = params.arguments.list
    rpc.notify('notifications/' + list + '/list_changed')
    return { content: [{ type: 'text', text: 'notified:' + list }] }
  },
}
for (const [method, [key, items]] of Object.entries(lists)) {
  methods[method] = (params) => {
    const m = params.cursor === undefined ? ['', '0'] : /^page-(\\d+)$/.exec(params.cursor)
    if (!m) throw new RpcError(-32602, 'bad cursor ' + params.cursor)
    const offset = Number(m[1])
    process.stderr.write('page ' + method + ' ' + offset + '\\n')
    const result = { [key]: items.slice(offset, offset + PAGE) }
    if (offset + PAGE < items.length) result.nextCursor = 'page-' + (offset + PAGE)
    return result
  }
}
const rpc = serve({ name: 'paged', methods })
`

async function addPaged(t, host) {
  const script = join(tmpDir(t), 'paged-server.mjs')
  writeFileSync(script, PAGED_SERVER)
  const id = await host.addServer({ name: 'paged', config: { type: 'stdio', command: NODE, args: [script] } })
  await waitState(host, id, 'ready')
  return id
}

test('pagination: every page of resources, templates and prompts is walked, in order', async (t) => {
  const { host, logs } = newHost(t)
  const id = await addPaged(t, host)
  const pages = (method) => logs
    .filter((l) => l.target === 'server.stderr' && l.serverId === id && l.message.startsWith(`page ${method} `))
    .map((l) => Number(l.message.trim().split(' ').at(-1)))

  const resources = await host.listResources(id)
  assert.deepEqual(resources.map((r) => r.uri), Array.from({ length: 23 }, (_, i) => `test://r/${i}`))
  await waitFor(() => pages('resources/list').length === 6, { what: 'six resources/list page logs', describe: () => JSON.stringify(pages('resources/list')) })
  assert.deepEqual(pages('resources/list'), [0, 4, 8, 12, 16, 20])

  const templates = await host.listResourceTemplates(id)
  assert.deepEqual(templates.map((r) => r.uriTemplate), Array.from({ length: 7 }, (_, i) => `test://t${i}/{id}`))
  await waitFor(() => pages('resources/templates/list').length === 2, { what: 'two templates page logs' })
  assert.deepEqual(pages('resources/templates/list'), [0, 4])

  const prompts = await host.listPrompts(id)
  assert.deepEqual(prompts.map((p) => p.name), Array.from({ length: 11 }, (_, i) => `p${i}`))
  await waitFor(() => pages('prompts/list').length === 3, { what: 'three prompts page logs' })
  assert.deepEqual(pages('prompts/list'), [0, 4, 8])
})

test('maxListPages: a walk needing more pages rejects with limit_exceeded', async (t) => {
  const { host } = newHost(t, { limits: { maxListPages: 5 } })
  const id = await addPaged(t, host)
  const err = await rejectsWith(() => host.listResources(id), 'limit_exceeded') // six pages
  assert.match(err.message, /maxListPages/)
  assert.equal((await host.listPrompts(id)).length, 11) // three pages
})

test("listChanged: resources and prompts list_changed notifications become 'listChanged' events", async (t) => {
  const { host } = newHost(t)
  const id = await addPaged(t, host)
  const events = []
  host.on('listChanged', (e) => events.push(e))
  assert.equal((await host.callTool({ serverId: id, name: 'notify', arguments: { list: 'resources' } })).content[0].text, 'notified:resources')
  await waitFor(() => events.length >= 1, { what: 'resources listChanged' })
  assert.equal((await host.callTool({ serverId: id, name: 'notify', arguments: { list: 'prompts' } })).content[0].text, 'notified:prompts')
  await waitFor(() => events.length >= 2, { what: 'prompts listChanged' })
  assert.deepEqual(events, [{ serverId: id, list: 'resources' }, { serverId: id, list: 'prompts' }])
})
