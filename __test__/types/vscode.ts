// Type-checked by `npm test` (tsc --noEmit, strict): the host as a VS Code
// extension uses it, against the real `@types/vscode` (devDependency, pinned).
// `context.secrets` (a `vscode.SecretStorage`: `store`, not `set`; `Thenable`
// results) is passed straight as `credentials`; the host and its `onX`
// subscriptions go into `context.subscriptions`; `whenReady` and the
// Disposable subscriptions are typed as index.d.ts says.
import type * as vscode from 'vscode'
import {
  McpHost,
  HostError,
  type CredentialStore,
  type Disposable,
  type ServerInfo,
  type WhenReadyOptions,
  type LogRecord,
} from '../../index.js'

declare const secrets: vscode.SecretStorage

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const host = new McpHost({
    dataDir: context.globalStorageUri.fsPath,
    credentials: context.secrets,
  })
  // The host is a vscode.Disposable ({dispose(): any}); so is every subscription.
  context.subscriptions.push(host)
  context.subscriptions.push(host.onLog((record: LogRecord) => console.log(record.message)))
  const asVscode: vscode.Disposable = host.onAction(({ action }) => console.log(action.type))
  asVscode.dispose()

  const id = await host.addServer({ name: 'docs', config: { type: 'stdio', command: 'docs-mcp' } })
  const options: WhenReadyOptions = { signal: AbortSignal.timeout(30_000), timeoutMs: 60_000 }
  try {
    const info: ServerInfo = await host.whenReady(id, options)
    console.log(info.name, info.protocolVersion, host.listTools().length)
  } catch (err) {
    if (err instanceof HostError && err.code === 'auth_required') await host.authorize(id)
  }
  const plugin = await host.addPlugin({ root: '/plugins/search' })
  const infos: ServerInfo[] = await Promise.all(plugin.servers.map((serverId) => host.whenReady(serverId)))
  console.log(infos.length)
}

export function credentialStores(): McpHost[] {
  // A vscode.SecretStorage value itself.
  const direct = new McpHost({ credentials: secrets })
  // A thin adapter returning Thenables (no async, no Promise).
  const adapter: CredentialStore = {
    get: (key) => secrets.get(key),
    set: (key, value) => secrets.store(key, value),
    delete: (key) => secrets.delete(key),
  }
  const thin = new McpHost({ credentials: adapter })
  // Plain values.
  const map = new Map<string, string>()
  const plain = new McpHost({
    credentials: { get: (key) => map.get(key), set: (key, value) => void map.set(key, value), delete: (key) => void map.delete(key) },
  })
  // @ts-expect-error a store needs `set` or `store`
  const incomplete = new McpHost({ credentials: { get: async () => undefined, delete: async () => {} } })
  // The OS keychain (an Electron or Node app without a SecretStorage).
  const keychain = new McpHost({ credentials: 'os' })
  // @ts-expect-error 'os' is the only name
  const named = new McpHost({ credentials: 'keychain' })
  return [direct, thin, plain, incomplete, keychain, named]
}

export function subscriptions(host: McpHost): void {
  // `on` is Node's: it returns the host (chaining), never a subscription.
  const same: McpHost = host.on('log', (record) => console.log(record.level))
  same.off('toolsChanged', () => {})
  // onX returns a Disposable; `using` disposes it at the end of the block (TypeScript 5.2+).
  {
    using sub = host.onToolsChanged(({ serverId, reason, tools }) => console.log(serverId, reason, tools))
    const d: Disposable = sub
    d.dispose()
  }
  const all: Disposable[] = [
    host.onAuthorizationUrl(({ serverId, url }) => console.log(serverId, url)),
    host.onListChanged(({ list }) => console.log(list)),
    host.onResourceUpdated(({ uri }) => console.log(uri)),
    host.onChannelMessage((message) => console.log(message.channel)),
  ]
  for (const d of all) d[Symbol.dispose]()
  // @ts-expect-error a log listener gets a LogRecord, not a number
  host.onLog((n: number) => console.log(n))
}
