/**
 * Rewind and fork as properties: for a random sequence of turns (with tool calls) and rewinds, ending with a
 * rewind to a random turn, a resume by a new agent rebuilds the same context, and it equals the context of a
 * fresh session given only the kept turns; with compactions among them, a fork at any turn the log holds has the
 * context that turn ended with.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import {
  type Agent,
  AgentBuilder,
  type ChatRequest,
  isAgentError,
  type Message,
  type SessionStorage,
  type ToolHandler,
} from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider, type ScriptStep } from '../src/testing/index.js';
import { collect } from './support/common.js';

const lookup: ToolHandler = {
  name: 'lookup',
  description: 'looks a word up',
  parametersSchema: { type: 'object' },
  isMutating: false,
  execute: async (input) => ({ content: `found ${JSON.stringify(input.arguments)}`, isError: false }),
};

/** The model's answer to a request, read from it alone, so a live run and a fresh one get the same answers. */
function answerOf(request: ChatRequest): ScriptStep[] {
  const messages = request.messages;
  const lastUser = messages.findLast((message) => message.type === 'user');
  const text =
    lastUser?.type === 'user' && lastUser.content[0]?.type === 'text' ? lastUser.content[0].text : '';
  // A user message reads `turn N calls C`.
  const [, name = '?', calls = '0'] = /^turn (\d+) calls (\d)$/.exec(text) ?? [];
  if (messages.at(-1)?.type === 'tool_result') return [{ type: 'text', text: `done ${name}` }];
  const steps: ScriptStep[] = [{ type: 'text', text: `answer ${name}` }];
  for (let index = 0; index < Number(calls); index += 1) {
    steps.push({
      type: 'tool_call',
      toolName: 'lookup',
      callId: `call_${name}_${index}`,
      arguments: { q: `${name}.${index}` },
    });
  }
  return steps;
}

async function buildAgent(storage: SessionStorage): Promise<Agent> {
  const provider = new ScriptedModelProvider({ responses: Array.from({ length: 400 }, () => answerOf) });
  return new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 2 })
    .registerModelProvider(provider)
    .registerTool(lookup)
    .registerSessionStorage(storage)
    .build();
}

type Step = { type: 'turn'; calls: number } | { type: 'rewind'; pick: number };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('turn' as const), calls: fc.nat({ max: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('rewind' as const), pick: fc.nat({ max: 50 }) }) },
);

const scenarioArbitrary = fc.record({
  steps: fc.array(stepArbitrary, { minLength: 1, maxLength: 8 }),
  lastCalls: fc.nat({ max: 2 }),
  finalPick: fc.nat({ max: 50 }),
});

test('rewind to a random turn, then resume = a fresh session given the kept turns', async () => {
  await fc.assert(
    fc.asyncProperty(scenarioArbitrary, async ({ steps, lastCalls, finalPick }) => {
      const storage = new InMemorySessionStorage();
      const agent = await buildAgent(storage);
      const session = await agent.newSession();
      /** The texts of the turns in the context, with their ids, as the model of what a rewind keeps. */
      const kept: { turnId: string; text: string }[] = [];
      let count = 0;
      const runTurn = async (calls: number) => {
        count += 1;
        const text = `turn ${count} calls ${calls}`;
        const turn = await session.sendMessage(text);
        expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_complete');
        kept.push({ turnId: turn.turnId, text });
      };
      const rewind = async (pick: number) => {
        const target = kept[pick % kept.length];
        if (target === undefined) return;
        await session.rewind({ toTurnId: target.turnId });
        kept.splice(pick % kept.length);
      };
      for (const step of steps) {
        if (step.type === 'turn') await runTurn(step.calls);
        else await rewind(step.pick);
      }
      // The property's own rewind: to a random turn of at least one.
      await runTurn(lastCalls);
      await rewind(finalPick);
      expect(session.turns().map((turn) => turn.turnId)).toEqual(kept.map((turn) => turn.turnId));
      const live = session.messages();
      await session.close();
      await agent.shutdown();

      const again = await buildAgent(storage);
      const resumed = await again.resumeSession(session.id);
      expect(resumed.messages()).toEqual(live);
      expect(resumed.turns().map((turn) => turn.turnId)).toEqual(kept.map((turn) => turn.turnId));

      const fresh = await again.newSession();
      for (const { text } of kept) {
        expect((await collect(await fresh.sendMessage(text))).at(-1)?.payload.type).toBe('turn_complete');
      }
      expect(resumed.messages()).toEqual(fresh.messages());
      expect(resumed.turns().map((turn) => turn.input)).toEqual(fresh.turns().map((turn) => turn.input));
      await fresh.close();
      await resumed.close();
      await again.shutdown();
    }),
    { numRuns: 60 },
  );
});

type ForkStep = Step | { type: 'compact' };

const forkStepArbitrary: fc.Arbitrary<ForkStep> = fc.oneof(
  { weight: 3, arbitrary: stepArbitrary },
  { weight: 1, arbitrary: fc.constant({ type: 'compact' as const }) },
);

test('a fork at any turn of a log with rewinds and compactions has the context that turn ended with', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(forkStepArbitrary, { minLength: 1, maxLength: 8 }), async (steps) => {
      const storage = new InMemorySessionStorage();
      const agent = await buildAgent(storage);
      const session = await agent.newSession();
      const inContext: string[] = [];
      /** The context each turn ended with: updated by a compaction before the next turn or rewind. */
      const endedWith = new Map<string, Message[]>();
      let last: string | undefined;
      let count = 0;
      for (const step of [...steps, { type: 'turn' as const, calls: 1 }]) {
        if (step.type === 'turn') {
          count += 1;
          const turn = await session.sendMessage(`turn ${count} calls ${step.calls}`);
          expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_complete');
          last = turn.turnId;
          inContext.push(turn.turnId);
          endedWith.set(turn.turnId, session.messages());
        } else if (step.type === 'rewind') {
          const index = step.pick % Math.max(1, inContext.length);
          const target = inContext[index];
          if (target === undefined) continue;
          await session.rewind({ toTurnId: target });
          inContext.splice(index);
          last = undefined;
        } else {
          const compacted = await session.compact().then(
            () => true,
            (error: unknown) => {
              if (isAgentError(error) && error.code === 'COMPACT_ERROR') return false;
              throw error;
            },
          );
          if (!compacted) continue;
          if (last !== undefined) endedWith.set(last, session.messages());
          const listed = new Set(session.turns().map((turn) => turn.turnId));
          inContext.splice(0, inContext.length, ...inContext.filter((id) => listed.has(id)));
        }
      }
      expect(session.turns().map((turn) => turn.turnId)).toEqual(inContext);
      const whole = session.messages();
      await session.close();
      const forkOfAll = await agent.forkSession(session.id);
      expect(forkOfAll.messages()).toEqual(whole);
      await forkOfAll.close();
      for (const [turnId, context] of endedWith) {
        const fork = await agent.forkSession(session.id, { atTurnId: turnId });
        expect(fork.messages()).toEqual(context);
        await fork.close();
        const resumed = await agent.resumeSession(fork.id);
        expect(resumed.messages()).toEqual(context);
        await resumed.close();
      }
      await agent.shutdown();
    }),
    { numRuns: 30 },
  );
});
