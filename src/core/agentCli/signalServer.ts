import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { z } from 'zod';
import { askForHelpTool, ralphCompleteTool, reportBlockedTool, reportProgressTool } from '../agent/tools/signalTools';
import type { AgentTool, ToolResult } from '../agent/tools/types';
import { appendSignal } from './signalFile';

/** The built-in agent's signal tools, offered to agent CLIs under the same names and arguments. */
export const SIGNAL_TOOLS: readonly AgentTool[] = [ralphCompleteTool, reportProgressTool, reportBlockedTool, askForHelpTool];

/** `ralph mcp`'s server as a value (tests connect to it in memory): each signal tool appends its signal to `signalFile`. */
export function createSignalServer(signalFile: string | undefined, version: string): McpServer {
  const server = new McpServer({ name: 'ralph', version });
  for (const tool of SIGNAL_TOOLS) {
    const shape = (tool.schema as z.ZodObject).shape;
    const run = tool.run as (args: unknown) => Promise<ToolResult>;
    server.registerTool(tool.name, { description: tool.description, inputSchema: shape }, async (args: unknown) => {
      const outcome = await run(args);
      if (outcome.signal && signalFile) await appendSignal(signalFile, outcome.signal);
      const note = signalFile ? '' : ' (no Ralph run is listening: the signal was not recorded)';
      return { content: [{ type: 'text' as const, text: `${outcome.content}${note}` }] };
    });
  }
  return server;
}

/** Serves the signal tools over stdio until the client closes the pipe. */
export async function serveSignalsOverStdio(signalFile: string | undefined, version: string): Promise<void> {
  const server = createSignalServer(signalFile, version);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
}
