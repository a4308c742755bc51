import { AgentBuilder, type ToolHandler } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { describeLog, eventsOf } from './support/agent.js';
import { type Child, startChild } from './support/child.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;
let child: Child | undefined;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  if (child !== undefined && child.process.exitCode === null && child.process.signalCode === null) {
    child.process.kill('SIGKILL');
  }
  await child?.exited;
  child = undefined;
  await folder.remove();
});

test('a turn suspended in a process that is then killed is approved and continued by another, and the tool runs once', async () => {
  const path = folder.file('agent.db');
  child = startChild('suspend-agent.mjs', [path]);
  const sessionId = (await child.waitForLine((line) => line.startsWith('SESSION '))).slice('SESSION '.length);
  const callId = (await child.waitForLine((line) => line.startsWith('SUSPENDED '))).slice(
    'SUSPENDED '.length,
  );
  child.process.kill('SIGKILL');
  await child.exited;
  expect(child.lines).not.toContain('DEPLOYED');

  const storage = await openSqliteStorage(path);
  try {
    const deployed: unknown[] = [];
    const deploy: ToolHandler = {
      name: 'deploy',
      description: 'deploys a service',
      parametersSchema: {
        type: 'object',
        properties: { service: { type: 'string' } },
        required: ['service'],
      },
      isMutating: true,
      needsApproval: true,
      execute: async (input) => {
        deployed.push(input.arguments);
        return { content: 'deployed web', isError: false };
      },
    };
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'Shipped.' }]] });
    const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
      .registerModelProvider(provider)
      .registerTool(deploy)
      .registerSessionStorage(storage.sessions)
      .build();
    const session = await agent.resumeSession(sessionId);
    expect(session.pendingApprovals()).toEqual([
      { callId, toolName: 'deploy', arguments: { service: 'web' } },
    ]);
    await session.approve(callId);
    const events = await eventsOf(await session.continue());
    expect(events.map((event) => event.payload.type)).toEqual([
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect(deployed).toEqual([{ service: 'web' }]);
    expect(provider.requests[0]?.messages.at(-1)).toEqual({
      type: 'tool_result',
      callId,
      content: 'deployed web',
      isError: false,
    });
    await session.close();
    await agent.shutdown();
    const log = await storage.sessions.loadSession(sessionId);
    expect(describeLog(log?.map((event) => event.payload) ?? [])).toEqual([
      'metadata: session_config',
      'user_message: ship it',
      'assistant_message: Deploying.',
      `tool_call: deploy ${callId}`,
      'metadata: approval_pending',
      'metadata: approval_decision',
      'metadata: approval_continued',
      `tool_result: ${callId} ok`,
      'assistant_message: Shipped.',
    ]);
  } finally {
    await storage.close();
  }
});
