import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sandbox } from './cli.js';

/** The @youyou/mcp tests' McpServer fixture: resources, prompts, elicitation, a changing tool list. */
export const FULL_MCP_SERVER = fileURLToPath(
  new URL('../../../mcp/test/fixtures/full-server.mjs', import.meta.url),
);

/** Registers the fixture as the MCP server "full"; returns the file it records its events in. */
export async function configureFullServer(sandbox: Sandbox): Promise<string> {
  const events = path.join(sandbox.root, 'mcp-events.jsonl');
  await mkdir(sandbox.home, { recursive: true });
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({
      mcpServers: {
        full: { command: process.execPath, args: [FULL_MCP_SERVER], env: { MCP_FIXTURE_EVENTS: events } },
      },
    }),
  );
  return events;
}

/** The events the fixture recorded so far. */
export function recordedEvents(file: string): { event: string; result?: unknown }[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { event: string; result?: unknown });
}
