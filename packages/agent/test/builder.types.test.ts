/**
 * Type tests of the public API, checked by `tsc` (the package's typecheck includes test/), and a small
 * runtime test so that vitest has something to run. The `@ts-expect-error` lines fail the typecheck if
 * the line below them stops being an error.
 */
import { expect, expectTypeOf, test } from 'vitest';
import {
  Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentEvent,
  type HasProvider,
  type NoProvider,
  RunningTurn,
  Session,
  type UserInput,
} from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

const config: AgentConfig = { defaultModel: 'scripted-model' };

/** Never called: only its body's types matter. */
function typeOnlyChecks(): void {
  // @ts-expect-error build() is a type error until a model provider is registered
  void new AgentBuilder(config).build();

  // @ts-expect-error registering tools or storages does not make build() available
  void new AgentBuilder(config).registerTool(undefined as never).build();

  const built: Promise<Agent> = new AgentBuilder(config)
    .registerModelProvider(new ScriptedModelProvider())
    .build();
  void built;
}
void typeOnlyChecks;

test('the builder typestate moves from NoProvider to HasProvider', () => {
  expectTypeOf(new AgentBuilder(config)).toEqualTypeOf<AgentBuilder<NoProvider>>();
  expectTypeOf(new AgentBuilder(config).registerModelProvider(new ScriptedModelProvider())).toEqualTypeOf<
    AgentBuilder<HasProvider>
  >();
  expectTypeOf<AgentBuilder<HasProvider>['build']>().returns.toEqualTypeOf<Promise<Agent>>();
});

test('RunningTurn is an AsyncIterable of AgentEvent and Session.sendMessage accepts a string', () => {
  expectTypeOf<RunningTurn>().toExtend<AsyncIterable<AgentEvent>>();
  expectTypeOf<ReturnType<RunningTurn['events']>>().toEqualTypeOf<AsyncIterable<AgentEvent>>();
  expectTypeOf<Session['sendMessage']>().toBeCallableWith('hello');
  expectTypeOf<Session['sendMessage']>().toBeCallableWith({ content: [{ type: 'text', text: 'hello' }] });
  expectTypeOf<Session['sendMessage']>().parameter(0).toEqualTypeOf<UserInput | string>();
  expectTypeOf<Session['sendMessage']>().returns.toEqualTypeOf<Promise<RunningTurn>>();
  expectTypeOf<Session>().toExtend<AsyncDisposable>();
});

test('a builder with a provider builds, and its session streams typed events', async () => {
  const agent = await new AgentBuilder(config)
    .registerModelProvider(new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'hi' }]] }))
    .build();
  expect(agent).toBeInstanceOf(Agent);
  const session = await agent.newSession();
  expect(session).toBeInstanceOf(Session);
  const turn = await session.sendMessage('hello');
  expect(turn).toBeInstanceOf(RunningTurn);
  const types: AgentEvent['payload']['type'][] = [];
  for await (const event of turn) types.push(event.payload.type);
  expect(types).toEqual(['text_delta', 'turn_complete']);
  await session.close();
  await agent.shutdown();
});
