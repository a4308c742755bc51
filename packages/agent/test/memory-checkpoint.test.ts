import { afterEach, describe, expect, test } from 'vitest';
import { InMemoryMemoryStorage, type Memory, type Session, templates } from '../src/index.js';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  collectTurn,
  deferred,
  requestsOf,
  requestText,
  runTurn,
  shutdownAgents,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const NAMESPACE = 'default';
const MODELS = [scriptedModel(), scriptedModel({ id: 'mem-model' })];

function memory(id: string, content: string, category?: string): Memory {
  const time = new Date(Date.UTC(2024, 0, Number(id.replace(/\D/g, '')) || 1));
  return {
    id,
    namespace: NAMESPACE,
    content,
    ...(category === undefined ? {} : { category }),
    createdAt: time,
    updatedAt: time,
  };
}

function memoriesAnswer(...contents: string[]): ScriptedResponse {
  const memories = contents.map((content) => ({ content, category: 'fact' }));
  return [{ type: 'text', text: JSON.stringify({ memories }) }];
}

/** A provider whose turns answer `answer N`, with the given memory extraction and consolidation answers. */
function memoryProvider(options: {
  extraction?: ScriptedResponse[];
  consolidation?: ScriptedResponse[];
}): ScriptedModelProvider {
  return new ScriptedModelProvider({
    models: MODELS,
    responses: Array.from({ length: 6 }, (_, index) => [{ type: 'text', text: `answer ${index + 1}` }]),
    byPurpose: {
      memory_extraction: options.extraction ?? [],
      memory_consolidation: options.consolidation ?? [],
    },
  });
}

describe('loading', () => {
  test('memories loaded at session start are in the dynamic prompt under the memory instructions', async () => {
    const storage = new InMemoryMemoryStorage();
    await storage.save(memory('m1', 'The user prefers tabs.', 'preference'));
    await storage.save({ ...memory('m2', 'Other namespace.'), namespace: 'elsewhere' });
    const provider = memoryProvider({});
    const { agent } = await buildAgent({ provider, memoryStorage: storage });
    const session = await agent.newSession();
    await runTurn(session, 'hello');

    const { stable, dynamic } = provider.requests[0]!.systemPromptParts;
    expect(dynamic.startsWith(templates.MEMORY_INSTRUCTIONS)).toBe(true);
    expect(dynamic).toContain('The user prefers tabs.');
    expect(dynamic.indexOf('The user prefers tabs.')).toBeGreaterThan(templates.MEMORY_INSTRUCTIONS.length);
    expect(dynamic).not.toContain('Other namespace.');
    expect(stable).not.toContain('The user prefers tabs.');
  });
});

describe('checkpoints', () => {
  test('interval 2: extraction inside turn 2 with memoryModel, messages since the last checkpoint, then reload', async () => {
    const storage = new InMemoryMemoryStorage();
    let session: Session | undefined;
    const runningAtExtraction: boolean[] = [];
    const watched =
      (response: ScriptedResponse): ScriptedResponse =>
      (request) => {
        runningAtExtraction.push(session?.isTurnRunning ?? false);
        return typeof response === 'function' ? response(request) : response;
      };
    const provider = memoryProvider({
      extraction: [
        watched(memoriesAnswer('The user lives in Paris.')),
        watched(memoriesAnswer('The user owns a cat.')),
      ],
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: storage,
      config: { memoryCheckpointInterval: 2, memoryModel: 'mem-model' },
    });
    session = await agent.newSession();

    await runTurn(session, 'I use tabs.');
    expect(requestsOf(provider, 'memory_extraction')).toHaveLength(0);
    const second = await runTurn(session, 'I live in Paris.');
    expect(second.types).toEqual(['text_delta', 'turn_complete']);

    const [first] = requestsOf(provider, 'memory_extraction');
    expect(first).toMatchObject({ purpose: 'memory_extraction', modelId: 'mem-model', tools: [] });
    expect(first?.systemPrompt).toBe(templates.MEMORY_EXTRACTION_PROMPT);
    for (const text of ['I use tabs.', 'answer 1', 'I live in Paris.', 'answer 2']) {
      expect(requestText(first)).toContain(text);
    }
    expect(runningAtExtraction).toEqual([true]);
    const saved = await storage.search(NAMESPACE, '', Number.POSITIVE_INFINITY);
    expect(saved).toMatchObject([{ content: 'The user lives in Paris.', sourceSessionId: session.id }]);

    // Reloaded after the checkpoint: the next request shows the new memory.
    await runTurn(session, 'What do I like?');
    expect(provider.requests.at(-1)?.systemPromptParts.dynamic).toContain('The user lives in Paris.');
    await runTurn(session, 'I have a cat.');

    const extractions = requestsOf(provider, 'memory_extraction');
    expect(extractions).toHaveLength(2);
    const since = requestText(extractions[1]);
    expect(since).toContain('What do I like?');
    expect(since).toContain('I have a cat.');
    expect(since).not.toContain('I use tabs.');
    expect(since).not.toContain('I live in Paris.');
    expect(runningAtExtraction).toEqual([true, true]);
    expect(provider.requests.filter((request) => request.purpose === 'turn').map((r) => r.modelId)).toEqual(
      Array(4).fill('scripted-model'),
    );
  });

  test('a malformed extraction answer: error MEMORY_ERROR, then turn_complete', async () => {
    const provider = memoryProvider({
      extraction: [[{ type: 'text', text: 'I could not find any JSON to give.' }]],
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: new InMemoryMemoryStorage(),
      config: { memoryCheckpointInterval: 1 },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'remember this');

    expect(requestsOf(provider, 'memory_extraction')).toHaveLength(1);
    expect(turn.types).toEqual(['text_delta', 'error', 'turn_complete']);
    expect(turn.errors[0]?.code).toBe('MEMORY_ERROR');
    expect((await runTurn(session, 'next')).types.at(-1)).toBe('turn_complete');
  });

  test('cancel during a checkpoint: turn_cancelled, and the messages stay for the next extraction', async () => {
    const extractionStarted = deferred();
    const provider = memoryProvider({
      extraction: [
        () => {
          extractionStarted.resolve();
          return [{ type: 'hang' }];
        },
        memoriesAnswer(),
      ],
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: new InMemoryMemoryStorage(),
      config: { memoryCheckpointInterval: 1 },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('I drink tea every morning.');
    const reading = collectTurn(turn);
    await extractionStarted.promise;
    turn.cancel();
    const record = await reading;

    // RunningTurn.cancel: "it ends with turn_cancelled"; the checkpoint runs inside the turn (SPEC §5.14).
    expect(record.types).toEqual(['text_delta', 'turn_cancelled']);
    expect((await turn.done).status).toBe('cancelled');
    await session.close();
    const extractions = requestsOf(provider, 'memory_extraction');
    expect(extractions).toHaveLength(2);
    expect(requestText(extractions[1])).toContain('I drink tea every morning.');
  });

  test('interval 0: no checkpoint during the session, one extraction of everything at close', async () => {
    const storage = new InMemoryMemoryStorage();
    const provider = memoryProvider({ extraction: [memoriesAnswer('The user writes TypeScript.')] });
    const { agent, backgroundErrors } = await buildAgent({
      provider,
      memoryStorage: storage,
      config: { memoryCheckpointInterval: 0 },
    });
    const session = await agent.newSession();
    for (const text of ['one', 'two', 'three']) await runTurn(session, `turn ${text}`);
    expect(requestsOf(provider, 'memory_extraction')).toHaveLength(0);

    await session.close();
    const extractions = requestsOf(provider, 'memory_extraction');
    expect(extractions).toHaveLength(1);
    for (const text of ['turn one', 'turn two', 'turn three'])
      expect(requestText(extractions[0])).toContain(text);
    expect(await storage.search(NAMESPACE, '', 10)).toMatchObject([
      { content: 'The user writes TypeScript.' },
    ]);
    expect(backgroundErrors).toEqual([]);
  });
});

describe('consolidation', () => {
  test('when the namespace exceeds memoryMaxItems it is consolidated to at most the limit', async () => {
    const storage = new InMemoryMemoryStorage();
    await storage.save(memory('m1', 'The user likes tea.'));
    await storage.save(memory('m2', 'The user likes green tea.'));
    await storage.save(memory('m3', 'The user works in Berlin.'));
    const provider = memoryProvider({
      extraction: [memoriesAnswer('The user moved to Paris.', 'The user has a dog.'), memoriesAnswer()],
      consolidation: [
        memoriesAnswer(
          'The user likes green tea.',
          'The user lives in Paris.',
          'The user has a dog.',
          'Extra one.',
        ),
      ],
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: storage,
      config: { memoryCheckpointInterval: 1, memoryMaxItems: 3, memoryModel: 'mem-model' },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'I moved to Paris with my dog.');

    expect(turn.types).toEqual(['text_delta', 'turn_complete']);
    const [consolidation] = requestsOf(provider, 'memory_consolidation');
    expect(consolidation).toMatchObject({ modelId: 'mem-model', tools: [] });
    expect(requestText(consolidation)).toContain('The user works in Berlin.');
    expect(requestText(consolidation)).toContain('The user moved to Paris.');
    const stored = await storage.search(NAMESPACE, '', Number.POSITIVE_INFINITY);
    expect(stored.length).toBeLessThanOrEqual(3);
    expect(stored.map((entry) => entry.content)).toContain('The user lives in Paris.');
    expect(stored.map((entry) => entry.content)).not.toContain('The user works in Berlin.');

    await runTurn(session, 'Where do I live?');
    expect(requestsOf(provider, 'turn').at(-1)?.systemPromptParts.dynamic).toContain(
      'The user lives in Paris.',
    );
  });
});
