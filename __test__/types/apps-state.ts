// Type-checked by `npm test` (tsc --noEmit): MCP Apps in the AHP state
// (issue 11) — `mcpApp.capabilities`, `channel`, `_meta.ui` on App tool
// calls and the `maxAppUiMetaBytes` limit, compiled against index.d.ts.
import { McpHost, type AhpMcpUiHostCapabilities, type McpServerCustomization, type McpServerCustomizationApps, type HostTool } from '../../index.js'

async function apps(): Promise<void> {
  const host = new McpHost({ mcpApps: true, limits: { maxAppUiMetaBytes: 32 * 1024 } })
  // @ts-expect-error the bound is a number of bytes
  new McpHost({ limits: { maxAppUiMetaBytes: '32k' } })
  const servers: McpServerCustomization[] = []
  for (const c of host.getState().customizations ?? []) {
    if (c.type === 'mcpServer') servers.push(c)
    else servers.push(...(c.children ?? []).filter((x): x is McpServerCustomization => x.type === 'mcpServer'))
  }
  for (const s of servers) {
    const channel: string | undefined = s.channel
    const app: McpServerCustomizationApps | undefined = s.mcpApp
    if (app === undefined || channel === undefined) continue
    const caps: AhpMcpUiHostCapabilities = app.capabilities
    const toolsChange: boolean | undefined = caps.serverTools?.listChanged
    const resourcesChange: boolean | undefined = caps.serverResources?.listChanged
    const logging: Record<string, never> | undefined = caps.logging
    const samplingTools: Record<string, never> | undefined = caps.sampling?.tools
    console.log(channel, toolsChange, resourcesChange, logging, samplingTools)
    // @ts-expect-error openLinks is the rendering client's, not the host's
    console.log(caps.openLinks)
  }
  // The harness starts an App tool call with the catalogue entry's `_meta.ui`
  // and the MCP contributor; the host's actions of that call carry it too.
  const tool: HostTool | undefined = host.listTools().find((t) => t._meta?.ui !== undefined)
  if (tool) {
    const start = { type: 'chat/toolCallStart', toolCallId: 'tc1', contributor: { kind: 'mcp', customizationId: tool.customizationId }, _meta: { ui: tool._meta?.ui } }
    console.log(start)
    await host.callTool({ name: tool.name, chat: 'ahp-chat:/c1', turnId: 't1', toolCallId: 'tc1' })
  }
  host.on('action', ({ action }) => {
    if (action.type === 'session/mcpServerStateChanged') console.log(action.state.kind === 'ready', action.channel)
    if (action.type === 'chat/toolCallComplete') console.log(action._meta?.ui)
  })
  await host.dispose()
}

void apps
