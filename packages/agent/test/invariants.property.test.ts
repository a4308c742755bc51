import fc from 'fast-check';
import { expect, test } from 'vitest';
import { AgentBuilder, AgentError, type AgentEvent, type Message, type ToolHandler } from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider, type ScriptStep } from '../src/testing/index.js';

// One model answer: some deltas, maybe tool calls, maybe a failure in the middle.
const stepArbitrary: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 12 }).map((text) => ({ type: 'text', text }) as const) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((text) => ({ type: 'reasoning', text }) as const) },
  {
    weight: 3,
    arbitrary: fc
      .record({
        toolName: fc.constantFrom('lookup', 'write_note', 'missing_tool', 'gated'),
        arguments: fc.oneof(
          fc.record({ key: fc.string({ maxLength: 6 }) }),
          fc.constant('{not json'),
          fc.constant({ key: 42 }),
        ),
      })
      .map((call) => ({ type: 'tool_call', ...call }) as const),
  },
  {
    weight: 1,
    arbitrary: fc.constant({
      type: 'error',
      error: new AgentError({ code: 'PROVIDER_ERROR', message: 'scripted outage', retryable: true }),
    } as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .nat({ max: 50 })
      .map((tokens) => ({ type: 'usage', usage: { inputTokens: tokens, outputTokens: 1 } }) as const),
  },
);

const turnArbitrary = fc.record({
  answers: fc.array(fc.array(stepArbitrary, { maxLength: 6 }), { minLength: 1, maxLength: 4 }),
  /** Cancel after reading this many events; null = never. */
  cancelAfter: fc.option(fc.nat({ max: 8 }), { nil: null }),
  /** When the turn suspends: approve (true) or deny each pending call, in order; and whether to resume first. */
  decisions: fc.array(fc.boolean(), { maxLength: 6 }),
  reopen: fc.boolean(),
});

function makeTools(): ToolHandler[] {
  const schema = { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] };
  return [
    {
      name: 'lookup',
      description: 'reads',
      parametersSchema: schema,
      isMutating: false,
      execute: async ({ arguments: args }) => ({
        content: `value of ${JSON.stringify(args)}`,
        isError: false,
      }),
    },
    {
      name: 'write_note',
      description: 'writes',
      parametersSchema: schema,
      isMutating: true,
      execute: async () => ({ content: 'written', isError: false }),
    },
    {
      name: 'gated',
      description: 'needs approval',
      parametersSchema: schema,
      isMutating: true,
      needsApproval: true,
      execute: async () => ({ content: 'approved and ran', isError: false }),
    },
  ];
}

const TERMINAL = new Set(['turn_complete', 'turn_cancelled', 'turn_suspended']);

function checkToolPairs(messages: readonly Message[]): void {
  const calls = messages.filter((message) => message.type === 'tool_call').map((message) => message.callId);
  const results = messages
    .filter((message) => message.type === 'tool_result')
    .map((message) => message.callId);
  expect(new Set(results)).toEqual(new Set(calls));
  expect(results.length).toBe(calls.length);
}

test('random scripts keep the turn and context invariants, and resume rebuilds the same context', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(turnArbitrary, { minLength: 1, maxLength: 4 }), async (turns) => {
      let plan: ScriptStep[][] = [];
      // Each model call takes the next answer of the current turn's plan; a plain answer once it runs out.
      const provider = new ScriptedModelProvider({
        responses: Array.from({ length: 64 }, () => () => plan.shift() ?? [{ type: 'text', text: 'done' }]),
      });
      const storage = new InMemorySessionStorage();
      let builder = new AgentBuilder({ defaultModel: 'scripted-model', maxToolCallsPerTurn: 5 })
        .registerModelProvider(provider)
        .registerSessionStorage(storage);
      for (const tool of makeTools()) builder = builder.registerTool(tool);
      const agent = await builder.build();
      let session = await agent.newSession();
      let lastSequence = -1;
      for (const turnPlan of turns) {
        plan = turnPlan.answers.map((answer) => [...answer]);
        let turn = await session.sendMessage('go');
        const turnId = turn.turnId;
        const decisions = [...turnPlan.decisions];
        // A suspended turn is decided and continued until it ends; each part has one terminal event.
        for (let part = 0; ; part++) {
          const events: AgentEvent[] = [];
          for await (const event of turn) {
            events.push(event);
            if (part === 0 && turnPlan.cancelAfter !== null && events.length === turnPlan.cancelAfter) {
              turn.cancel();
            }
          }
          const terminal = events.filter((event) => TERMINAL.has(event.payload.type));
          expect(terminal).toHaveLength(1);
          expect(events.at(-1)).toBe(terminal[0]);
          for (const event of events) {
            expect(event.sequence).toBeGreaterThan(lastSequence);
            lastSequence = event.sequence;
            expect(event.turnId).toBe(turnId);
          }
          const starts = events.filter((event) => event.payload.type === 'tool_call_start').length;
          const ends = events.filter((event) => event.payload.type === 'tool_call_end').length;
          expect(ends).toBe(starts);
          const last = events.at(-1)?.payload;
          if (last?.type !== 'turn_suspended') break;
          if (turnPlan.reopen) {
            const before = session.messages();
            await session.close();
            session = await agent.resumeSession(session.id);
            expect(session.messages()).toEqual(before);
            // A resumed Session numbers its events afresh.
            lastSequence = -1;
          }
          expect(session.pendingApprovals()).toEqual(last.pendingCalls);
          for (const call of last.pendingCalls) {
            if (decisions.shift() ?? true) await session.approve(call.callId);
            else await session.deny(call.callId, 'no');
          }
          turn = await session.continue();
        }
        checkToolPairs(session.messages());
      }
      const live = session.messages();
      await session.close();
      const resumed = await agent.resumeSession(session.id);
      expect(resumed.messages()).toEqual(live);
      await resumed.close();
      await agent.shutdown();
    }),
    { numRuns: 150 },
  );
});
