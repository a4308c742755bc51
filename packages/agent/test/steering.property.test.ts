import fc from 'fast-check';
import { expect, test } from 'vitest';
import {
  AgentBuilder,
  AgentError,
  type AgentEvent,
  type RunningTurn,
  type ToolHandler,
} from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider, type ScriptStep } from '../src/testing/index.js';
import { checkPairsIntact, textOf } from './support/steering-fixtures.js';

const stepArbitrary: fc.Arbitrary<ScriptStep> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 8 }).map((text) => ({ type: 'text', text }) as const) },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom('lookup', 'write_note', 'missing_tool')
      .map((toolName) => ({ type: 'tool_call', toolName, arguments: { key: 'k' } }) as const),
  },
  { weight: 1, arbitrary: fc.constant({ type: 'delay', ms: 1 } as const) },
  {
    weight: 1,
    arbitrary: fc.constant({
      type: 'error',
      error: new AgentError({ code: 'PROVIDER_ERROR', message: 'scripted outage', retryable: true }),
    } as const),
  },
);

const scenarioArbitrary = fc.record({
  answers: fc.array(fc.array(stepArbitrary, { maxLength: 5 }), { minLength: 1, maxLength: 8 }),
  /** Each action happens once this many events (of all turns) were read. */
  actions: fc.array(fc.record({ atEvent: fc.nat({ max: 12 }), kind: fc.constantFrom('steer', 'followUp') }), {
    maxLength: 5,
  }),
  cancelAtEvent: fc.option(fc.nat({ max: 12 }), { nil: null }),
});

function makeTools(): ToolHandler[] {
  const schema = { type: 'object', properties: { key: { type: 'string' } } };
  return [
    {
      name: 'lookup',
      description: 'reads',
      parametersSchema: schema,
      isMutating: false,
      execute: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        return { content: 'value', isError: false };
      },
    },
    {
      name: 'write_note',
      description: 'writes',
      parametersSchema: schema,
      isMutating: true,
      execute: async () => ({ content: 'written', isError: false }),
    },
  ];
}

test('random scripts with random steer and follow-up times keep every turn and context invariant', async () => {
  await fc.assert(
    fc.asyncProperty(scenarioArbitrary, async ({ answers, actions, cancelAtEvent }) => {
      const plan = answers.map((answer) => [...answer]);
      const provider = new ScriptedModelProvider({
        responses: Array.from({ length: 200 }, () => () => plan.shift() ?? [{ type: 'text', text: 'done' }]),
      });
      const storage = new InMemorySessionStorage();
      let builder = new AgentBuilder({ defaultModel: 'scripted-model', maxToolCallsPerTurn: 4 })
        .registerModelProvider(provider)
        .registerSessionStorage(storage);
      for (const tool of makeTools()) builder = builder.registerTool(tool);
      const agent = await builder.build();
      const session = await agent.newSession();

      const given: { text: string; kind: 'steer' | 'followUp' }[] = [];
      const followUps: Promise<RunningTurn>[] = [];
      const byTurn = new Map<string, AgentEvent[]>();
      let read = 0;
      let lastSequence = -1;
      let turn: RunningTurn | undefined = await session.sendMessage('go');
      const seen = new Set<string>();
      while (turn !== undefined) {
        seen.add(turn.turnId);
        for await (const event of turn) {
          expect(event.sequence).toBeGreaterThan(lastSequence);
          lastSequence = event.sequence;
          const events = byTurn.get(event.turnId) ?? [];
          events.push(event);
          byTurn.set(event.turnId, events);
          read += 1;
          for (const action of actions) {
            if (action.atEvent !== read) continue;
            const text = `${action.kind}-${given.length}`;
            given.push({ text, kind: action.kind });
            if (action.kind === 'steer') await session.steer(text);
            else followUps.push(session.followUp(text));
          }
          if (cancelAtEvent === read) turn.cancel();
        }
        await turn.done;
        const next = session.currentTurn;
        turn = next !== undefined && !seen.has(next.turnId) ? next : undefined;
      }
      // Every follow-up started a turn, and it was one of the turns read above.
      for (const started of await Promise.all(followUps)) expect(seen.has(started.turnId)).toBe(true);

      // One terminal event per turn, last of its turn; tool starts and ends paired.
      for (const events of byTurn.values()) {
        const kinds = events.map((event) => event.payload.type);
        const terminals = kinds.filter((kind) => kind === 'turn_complete' || kind === 'turn_cancelled');
        expect(terminals).toHaveLength(1);
        expect(kinds.at(-1)).toBe(terminals[0]);
        expect(kinds.filter((kind) => kind === 'tool_call_start').length).toBe(
          kinds.filter((kind) => kind === 'tool_call_end').length,
        );
      }
      // Pairs intact: nothing (a steered message included) between a batch's calls and their results.
      const live = session.messages();
      checkPairsIntact(live);
      // Every message given is saved exactly once, steers and follow-ups each in the order given.
      const log = (await storage.loadSession(session.id)) ?? [];
      const users = log.flatMap((event) =>
        event.payload.type === 'user_message'
          ? [textOf({ type: 'user', content: event.payload.content })]
          : [],
      );
      expect(users[0]).toBe('go');
      expect([...users.slice(1)].sort()).toEqual(given.map((item) => item.text).sort());
      for (const kind of ['steer', 'followUp'] as const) {
        expect(users.filter((text) => text.startsWith(`${kind}-`))).toEqual(
          given.filter((item) => item.kind === kind).map((item) => item.text),
        );
      }
      // A `steered` event for each steer that entered a running turn's context.
      const steeredEvents = [...byTurn.values()].flat().filter((event) => event.payload.type === 'steered');
      for (const event of steeredEvents) {
        const content = event.payload.type === 'steered' ? event.payload.content : [];
        expect(users).toContain(textOf({ type: 'user', content }));
      }
      await session.close();
      const resumed = await agent.resumeSession(session.id);
      expect(resumed.messages()).toEqual(live);
      await resumed.close();
      await agent.shutdown();
    }),
    { numRuns: 120 },
  );
}, 60_000);
