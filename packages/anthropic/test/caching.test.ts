import { type Agent, AgentBuilder, type HookPayload, type HookResult, type Plugin } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { messageEvents, sseReply, textReply, toolUseBlock } from '../../../test-support/anthropic-wire.js';
import { messagesApiViolations } from '../../../test-support/anthropic-wire-rules.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { MAX_CACHE_BREAKPOINTS } from '../src/cache.js';
import {
  bodyOf,
  cacheMarks,
  chatRequest,
  collect,
  drain,
  lookupTool,
  providerFor,
  withoutCacheMarks,
} from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

/** A reply that calls `lookup` once. */
function lookupReply(id: string, q: string) {
  return sseReply(
    messageEvents({
      blocks: [toolUseBlock(0, { id, name: 'lookup', jsonChunks: [JSON.stringify({ q })] })],
      stopReason: 'tool_use',
    }),
  );
}

/** A plugin whose TurnStart section names the turn, so the dynamic part changes every turn. */
function turnCounter(): Plugin {
  let turn = 0;
  return {
    id: 'counter',
    displayName: 'Counter',
    description: 'Names the turn.',
    initialize: async () => undefined,
    apply: (context) => {
      context.tap('TurnStart', (payload: HookPayload): HookResult => {
        turn += 1;
        const data = payload.data as { userInput: string; dynamicSections: string[] };
        return { type: 'continue_with', data: { ...data, dynamicSections: [`This is turn ${turn}.`] } };
      });
    },
    shutdown: async () => undefined,
  };
}

async function cachingAgent(): Promise<Agent> {
  return new AgentBuilder({
    defaultModel: 'claude-sonnet-5-5',
    systemInstructions: ['You are a test assistant.'],
    environmentContext: { cwd: '/work', date: '2026-12-03' },
    onBackgroundError: () => undefined,
  })
    .registerModelProvider(providerFor(server))
    .registerTool(lookupTool())
    .registerPlugin(turnCounter())
    .build();
}

/** The serialised messages of a body, marks left out (they say where to cache, not what). */
function messagesText(index: number): string {
  return JSON.stringify(withoutCacheMarks(bodyOf(server, index).messages));
}

/** The serialised part of a body's messages up to and including the block a mark sits on. */
function prefixThrough(index: number, mark: string): string {
  const [, message, , block] = mark.split('.').map(Number);
  const messages = withoutCacheMarks(bodyOf(server, index).messages) as { content: unknown[] }[];
  const head = messages.slice(0, message);
  const at = messages[message as number];
  if (at === undefined || block === undefined) throw new Error(`no block at ${mark}`);
  return JSON.stringify([...head, { ...at, content: at.content.slice(0, block + 1) }]);
}

describe('prompt caching over the Messages API', () => {
  test('step 3 of a tool loop marks its last tool result and the system prompt, within the limit of 4', async () => {
    server.enqueue(lookupReply('toolu_1', 'apple'), lookupReply('toolu_2', 'pear'), textReply(['Done.']));
    const agent = await cachingAgent();
    const session = await agent.newSession();
    await collect(await session.sendMessage('look up two fruits'));

    expect(server.requests).toHaveLength(3);
    const step3 = bodyOf(server, 2);
    expect(messagesApiViolations(step3)).toEqual([]);
    const messages = step3.messages as { role: string; content: Record<string, unknown>[] }[];
    const lastBlock = messages.at(-1)?.content.at(-1);
    expect(lastBlock).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_2',
      cache_control: { type: 'ephemeral' },
    });
    expect(step3.system).toEqual([
      {
        type: 'text',
        text: expect.stringContaining('You are a test assistant.'),
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(cacheMarks(step3)).toEqual([`messages.${messages.length - 1}.content.0`, 'system.0']);
    for (let index = 0; index < 3; index += 1) {
      expect(cacheMarks(bodyOf(server, index)).length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
    }
    // Each step's messages extend the previous step's: the second call is a reply of its own, after the first
    // call's result, not merged into the first reply (which would rewrite what the cache holds).
    expect(messagesText(1).startsWith(messagesText(0).slice(0, -1))).toBe(true);
    expect(messagesText(2).startsWith(messagesText(1).slice(0, -1))).toBe(true);
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    await agent.shutdown();
  });

  test('each step extends the one before byte for byte; a new turn section leaves the system block as it was', async () => {
    server.enqueue(
      lookupReply('toolu_1', 'apple'),
      textReply(['Apple found.']),
      textReply(['Second.']),
      textReply(['Third.']),
    );
    const agent = await cachingAgent();
    const session = await agent.newSession();
    await collect(await session.sendMessage('look up apple'));
    await collect(await session.sendMessage('and now?'));
    await collect(await session.sendMessage('and then?'));
    expect(server.requests).toHaveLength(4);

    // Step 1's messages are a byte prefix of step 2's: only new messages follow.
    const step1 = messagesText(0);
    const step2 = messagesText(1);
    expect(step2.startsWith(step1.slice(0, -1))).toBe(true);
    expect(step2.length).toBeGreaterThan(step1.length);

    // The dynamic part changed every turn, and went with the newest user message, not into the system block.
    expect(messagesText(0)).toContain('This is turn 1.');
    expect(messagesText(2)).toContain('This is turn 2.');
    expect(messagesText(2)).not.toContain('This is turn 1.');
    const systemBytes = server.requests.map((request) =>
      JSON.stringify((request.body as { system: unknown }).system),
    );
    expect(new Set(systemBytes).size).toBe(1);
    expect(systemBytes[0]).not.toContain('This is turn');
    expect(systemBytes[0]).not.toContain('/work');
    const toolBytes = server.requests.map((request) =>
      JSON.stringify((request.body as { tools: unknown }).tools),
    );
    expect(new Set(toolBytes).size).toBe(1);

    // Turn 2 marks the end of turn 1 (the answer before its dynamic part) and its last block; turn 3 marks the
    // end of turn 1 again, where it reads back what turn 2 wrote (the same bytes up to the mark), the end of
    // turn 2, and its last block: with the system prompt, the 4 the API allows.
    const turn1End = 'messages.3.content.0';
    expect(cacheMarks(bodyOf(server, 2))).toEqual([turn1End, 'messages.4.content.1', 'system.0']);
    expect(cacheMarks(bodyOf(server, 3))).toEqual([
      turn1End,
      'messages.5.content.0',
      'messages.6.content.1',
      'system.0',
    ]);
    expect(prefixThrough(3, turn1End)).toBe(prefixThrough(2, turn1End));
    expect(prefixThrough(2, turn1End)).toMatch(/Apple found\."\}\]\}\]$/);
    for (let index = 0; index < 4; index += 1) {
      expect(messagesApiViolations(bodyOf(server, index))).toEqual([]);
      expect(cacheMarks(bodyOf(server, index)).length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
    }
    await agent.shutdown();
  });

  test('a compaction or memory request, sent once, gets no conversation breakpoint', async () => {
    server.enqueue(textReply(['Summary.']), textReply(['{"memories": []}']));
    const provider = providerFor(server);
    for (const purpose of ['compaction', 'memory_extraction'] as const) {
      await drain(provider.chat(chatRequest({ purpose }), new AbortController().signal));
    }
    expect(cacheMarks(bodyOf(server, 0))).toEqual(['system.0']);
    expect(cacheMarks(bodyOf(server, 1))).toEqual(['system.0']);
  });
});
