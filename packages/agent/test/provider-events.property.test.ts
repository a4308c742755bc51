import fc from 'fast-check';
import { expect, test } from 'vitest';
import { AgentBuilder, type AgentEvent, type Message, type ToolHandler } from '../src/index.js';
import { InMemorySessionStorage } from '../src/testing/index.js';
import { type RawAnswer, RawProvider } from './support/raw-provider.js';
import { expectTurnInvariants, expectWellTypedLog } from './support/well-typed.js';

/** Any value at all: what a broken provider may put in a field or yield as an event. */
const junk = fc.anything({
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withNullPrototype: true,
  withSet: true,
  withSparseArray: true,
  maxDepth: 2,
});

/** A field: mostly well-typed, sometimes anything, sometimes left out. */
function field<T>(good: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 6, arbitrary: good },
    { weight: 2, arbitrary: junk },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const callId = fc.constantFrom('call_a', 'call_b', 'call_c', '');
const toolName = fc.constantFrom('lookup', 'missing_tool');
const argumentsText = fc.oneof(
  fc.constant('{"key":"k"}'),
  fc.constant('{not json'),
  fc.constant(''),
  fc.record({ key: fc.string({ maxLength: 4 }) }),
);

/** One value a provider yields: a ChatEvent whose fields may be ill-typed, or something else entirely. */
const eventArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ type: fc.constant('text_delta'), text: field(fc.string({ maxLength: 8 })) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('reasoning_delta'), text: field(fc.string({ maxLength: 8 })) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('reasoning_signature'),
      signature: field(fc.string({ maxLength: 8 })),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('tool_call'),
      callId: field(callId),
      toolName: field(toolName),
      arguments: field(argumentsText),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('usage'),
      usage: field(
        fc.record({ inputTokens: field(fc.nat({ max: 100 })), outputTokens: field(fc.nat({ max: 100 })) }),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant('done'),
      stopReason: field(fc.constantFrom('end_turn', 'tool_use', 'max_tokens', 'other')),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: field(fc.constantFrom('thinking', 'text')), text: junk }) },
  { weight: 1, arbitrary: junk },
);

const answerArbitrary: fc.Arbitrary<RawAnswer> = fc.record({
  values: fc.array(eventArbitrary, { maxLength: 6 }),
  hang: fc.boolean(),
});

const turnArbitrary = fc.record({
  answers: fc.array(answerArbitrary, { minLength: 1, maxLength: 3 }),
  /** Cancel after reading this many events; null = never (then a hanging answer is cancelled after 5 ms). */
  cancelAfter: fc.option(fc.nat({ max: 6 }), { nil: null }),
});

const lookup: ToolHandler = {
  name: 'lookup',
  description: 'reads a key',
  parametersSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  isMutating: false,
  execute: async ({ arguments: args }) => ({ content: `value of ${JSON.stringify(args)}`, isError: false }),
};

function expectToolPairs(messages: readonly Message[]): void {
  const calls = messages.flatMap((message) => (message.type === 'tool_call' ? [message.callId] : []));
  const results = messages.flatMap((message) => (message.type === 'tool_result' ? [message.callId] : []));
  expect(results.length).toBe(calls.length);
  expect(new Set(results)).toEqual(new Set(calls));
}

test('random malformed provider events keep the event invariants and never reach the log ill-typed', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(turnArbitrary, { minLength: 1, maxLength: 3 }), async (turns) => {
      const provider = new RawProvider({ id: 'fuzzed' });
      const storage = new InMemorySessionStorage();
      const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxToolCallsPerTurn: 6 })
        .registerModelProvider(provider)
        .registerSessionStorage(storage)
        .registerTool(lookup)
        .build();
      const session = await agent.newSession();
      for (const plan of turns) {
        provider.enqueue(...plan.answers);
        const turn = await session.sendMessage('go');
        // A hanging answer that the reader never cancels is cancelled by a timer, as a host's deadline would.
        const deadline = setTimeout(() => turn.cancel(), 5);
        const events: AgentEvent[] = [];
        for await (const event of turn) {
          events.push(event);
          if (plan.cancelAfter !== null && events.length === plan.cancelAfter) turn.cancel();
        }
        clearTimeout(deadline);
        expectTurnInvariants(events);
        for (const event of events) {
          if (event.payload.type === 'error' && event.payload.error.code === 'PROVIDER_ERROR') {
            expect(event.payload.error.message).toContain("'fuzzed'");
          }
        }
        expectToolPairs(session.messages());
        // Nothing the provider sent ill-typed got into the storage.
        expectWellTypedLog((await storage.loadSession(session.id)) ?? []);
      }
      // What was saved rebuilds the same context.
      const live = session.messages();
      await session.close();
      const resumed = await agent.resumeSession(session.id);
      expect(resumed.messages()).toEqual(live);
      await agent.shutdown();
    }),
    { numRuns: 120 },
  );
});
