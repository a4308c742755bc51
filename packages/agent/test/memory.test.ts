import { describe, expect, it } from 'vitest';
import { AgentError, isAgentError } from '../src/kernel/error.js';
import type { Message } from '../src/kernel/types.js';
import { MemoryManager, parseMemoryAnswer } from '../src/memory/memory.js';
import type { ChatEvent, ChatRequest, ModelProvider } from '../src/ports/model.js';
import type { Memory, MemoryStorage } from '../src/ports/storage.js';
import { InMemoryMemoryStorage } from '../src/storage/in-memory.js';

/** A small Map-backed store; `failOn` makes one method throw a plain Error. */
class MapMemoryStorage implements MemoryStorage {
  readonly memories = new Map<string, Memory>();
  readonly calls: string[] = [];
  failOn: 'search' | 'save' | 'delete' | undefined;
  private order = 0;
  private readonly inserted = new Map<string, number>();

  async search(namespace: string, query: string, limit: number): Promise<Memory[]> {
    this.calls.push(`search:${query}:${limit}`);
    if (this.failOn === 'search') throw new Error('disk on fire');
    const rank = (memory: Memory) => this.inserted.get(memory.id) ?? 0;
    return [...this.memories.values()]
      .filter((memory) => memory.namespace === namespace)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || rank(b) - rank(a))
      .slice(0, limit);
  }

  async save(memory: Memory): Promise<void> {
    this.calls.push('save');
    if (this.failOn === 'save') throw new Error('disk full');
    if (!this.inserted.has(memory.id)) this.inserted.set(memory.id, this.order++);
    this.memories.set(memory.id, { ...memory });
  }

  async delete(id: string): Promise<void> {
    this.calls.push('delete');
    if (this.failOn === 'delete') throw new Error('read-only');
    this.memories.delete(id);
  }

  seed(contents: readonly string[], namespace = 'ns'): void {
    contents.forEach((content, index) => {
      const at = new Date(Date.UTC(2024, 0, 1, 0, 0, index));
      const id = `seed-${namespace}-${index}`;
      this.inserted.set(id, this.order++);
      this.memories.set(id, {
        id,
        namespace,
        content,
        category: 'fact',
        createdAt: at,
        updatedAt: at,
        sourceSessionId: 'old-session',
      });
    });
  }

  contents(namespace = 'ns'): string[] {
    return [...this.memories.values()]
      .filter((memory) => memory.namespace === namespace)
      .map((memory) => memory.content)
      .sort();
  }
}

/** A model that answers each request with the next canned text, streamed in small pieces. */
function fakeProvider(answers: Array<string | Error>): ModelProvider & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id: 'fake',
    models: [
      {
        id: 'fake-model',
        displayName: 'Fake',
        contextWindow: 100_000,
        capabilities: { toolUse: true, vision: false, streaming: true },
      },
    ],
    requests,
    chat(request: ChatRequest): AsyncIterable<ChatEvent> {
      requests.push(request);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('no canned answer left');
      if (answer instanceof Error) throw answer;
      return (async function* () {
        for (let index = 0; index < answer.length; index += 7) {
          yield { type: 'text_delta', text: answer.slice(index, index + 7) };
        }
        yield { type: 'done', stopReason: 'end_turn' };
      })();
    },
  };
}

const conversation: Message[] = [
  { type: 'user', content: [{ type: 'text', text: 'I prefer tabs over spaces.' }] },
  { type: 'assistant', content: [{ type: 'text', text: 'Noted.' }], status: 'complete' },
];

function answerOf(memories: Array<{ content: string; category?: string }>): string {
  return JSON.stringify({ memories });
}

async function rejectionOf(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    if (isAgentError(error)) return error;
    throw new Error(`expected an AgentError, got ${String(error)}`);
  }
  throw new Error('expected a rejection');
}

function thrownBy(run: () => unknown): AgentError {
  try {
    run();
  } catch (error) {
    if (isAgentError(error)) return error;
    throw new Error(`expected an AgentError, got ${String(error)}`);
  }
  throw new Error('expected a throw');
}

describe('parseMemoryAnswer', () => {
  it('reads bare JSON', () => {
    expect(parseMemoryAnswer('{"memories":[{"content":"Likes tea","category":"preference"}]}')).toEqual([
      { content: 'Likes tea', category: 'preference' },
    ]);
  });

  it('reads an empty memories array', () => {
    expect(parseMemoryAnswer('  {"memories": []}\n')).toEqual([]);
  });

  it('reads JSON inside a ```json fence and inside a plain fence', () => {
    const body = '{"memories":[{"content":"Uses vim"}]}';
    expect(parseMemoryAnswer(`Here you go:\n\`\`\`json\n${body}\n\`\`\`\nDone.`)).toEqual([
      { content: 'Uses vim' },
    ]);
    expect(parseMemoryAnswer(`\`\`\`\n${body}\n\`\`\``)).toEqual([{ content: 'Uses vim' }]);
  });

  it('finds the JSON object between prose', () => {
    const text = 'Sure! {not json} The result is {"memories":[{"content":"Works at ACME"}]} — hope it helps.';
    expect(parseMemoryAnswer(text)).toEqual([{ content: 'Works at ACME' }]);
  });

  it('balances braces while respecting strings and escapes', () => {
    const text =
      'Answer: {"memories":[{"content":"Writes {braces} and \\"}\\" in strings","category":"fact"}]} end }';
    expect(parseMemoryAnswer(text)).toEqual([
      { content: 'Writes {braces} and "}" in strings', category: 'fact' },
    ]);
  });

  it('prefers the outermost object holding a memories array', () => {
    const text = 'x {"result": {"memories": ["inner"]}, "memories": ["outer"]} y';
    expect(parseMemoryAnswer(text)).toEqual([{ content: 'outer' }]);
  });

  it('finds a memories object nested inside another object', () => {
    expect(parseMemoryAnswer('{"result": {"memories": ["inner"]}}')).toEqual([{ content: 'inner' }]);
  });

  it('accepts a bare top-level array and plain-string entries', () => {
    expect(parseMemoryAnswer('[{"content":"A","category":"fact"}, "B"]')).toEqual([
      { content: 'A', category: 'fact' },
      { content: 'B' },
    ]);
  });

  it('drops a category that is not a string', () => {
    expect(parseMemoryAnswer('{"memories":[{"content":"A","category":7}]}')).toEqual([{ content: 'A' }]);
  });

  it.each([
    ['empty text', '   \n', /empty/],
    ['no JSON at all', 'I could not find anything worth remembering.', /no JSON/],
    ['JSON without a memories array', '{"items": []}', /no "memories" array/],
    ['memories that is not an array', '{"memories": "Likes tea"}', /"memories" is not an array/],
    [
      'an entry with non-string content',
      '{"memories": [{"content": 42}]}',
      /entry 0 has no string "content"/,
    ],
    ['an entry that is a number', '{"memories": ["ok", 3]}', /entry 1 is neither/],
    ['truncated JSON', '{"memories": [{"content": "Likes', /no JSON/],
  ])('rejects %s with MEMORY_ERROR', (_name, text, reason) => {
    const error = thrownBy(() => parseMemoryAnswer(text));
    expect(error.code).toBe('MEMORY_ERROR');
    expect(error.message).toMatch(reason);
  });

  it('shows the start of the answer in the error, cut to about 200 characters', () => {
    const text = `garbage ${'x'.repeat(500)}`;
    const error = thrownBy(() => parseMemoryAnswer(text));
    expect(error.message).toContain('garbage xxx');
    expect(error.message.length).toBeLessThan(400);
  });

  it('throws only AgentError, even for input that is not a string', () => {
    const error = thrownBy(() => parseMemoryAnswer(undefined as unknown as string));
    expect(error.code).toBe('MEMORY_ERROR');
  });
});

describe('MemoryManager.load', () => {
  it('returns the most recent memories of its namespace, at most maxItems', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['one', 'two', 'three']);
    storage.seed(['elsewhere'], 'other');
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 2 });
    const loaded = await manager.load();
    expect(loaded.map((memory) => memory.content)).toEqual(['three', 'two']);
    expect(storage.calls).toEqual(['search::2']);
  });

  it('wraps a storage failure as STORAGE_ERROR', async () => {
    const storage = new MapMemoryStorage();
    storage.failOn = 'search';
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 5 });
    const error = await rejectionOf(manager.load());
    expect(error.code).toBe('STORAGE_ERROR');
    expect(error.message).toContain('disk on fire');
  });
});

describe('MemoryManager.extract', () => {
  const base = { modelId: 'memory-model', sessionId: 'session-1', signal: new AbortController().signal };

  it('asks the model with the extraction purpose and saves what it answers', async () => {
    const storage = new MapMemoryStorage();
    const provider = fakeProvider([
      answerOf([
        { content: '  Prefers tabs over spaces.  ', category: 'preference' },
        { content: 'Works on YouYou.', category: '' },
      ]),
    ]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const before = Date.now();
    const saved = await manager.extract({ ...base, messages: conversation, provider });

    expect(provider.requests).toHaveLength(1);
    const request = provider.requests[0]!;
    expect(request.purpose).toBe('memory_extraction');
    expect(request.modelId).toBe('memory-model');
    expect(request.tools).toEqual([]);
    expect(request.systemPrompt).toContain('You extract long-term memories');
    const userMessage = request.messages[0];
    expect(userMessage?.type === 'user' && userMessage.content[0]).toMatchObject({
      type: 'text',
      text: expect.stringContaining('[user]\nI prefer tabs over spaces.'),
    });

    expect(saved).toHaveLength(2);
    const [first, second] = saved;
    expect(first).toMatchObject({
      namespace: 'ns',
      content: 'Prefers tabs over spaces.',
      category: 'preference',
      sourceSessionId: 'session-1',
    });
    expect(second?.content).toBe('Works on YouYou.');
    expect(second && 'category' in second).toBe(false);
    expect(first?.id).not.toBe(second?.id);
    expect(first?.createdAt.getTime()).toBeGreaterThanOrEqual(before);
    expect(first?.updatedAt.getTime()).toBe(first?.createdAt.getTime());
    expect(storage.contents()).toEqual(['Prefers tabs over spaces.', 'Works on YouYou.']);
  });

  it('skips empty entries and duplicates of stored memories, ignoring case and spaces', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['Likes tea.']);
    const provider = fakeProvider([
      answerOf([
        { content: '  likes TEA.' },
        { content: '   ' },
        { content: 'Uses vim.' },
        { content: 'uses vim.' },
      ]),
    ]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const saved = await manager.extract({ ...base, messages: conversation, provider });
    expect(saved.map((memory) => memory.content)).toEqual(['Uses vim.']);
    expect(storage.contents()).toEqual(['Likes tea.', 'Uses vim.']);
    expect(storage.calls.filter((call) => call.startsWith('search'))).toEqual(['search::Infinity']);
  });

  it('does not call the model when there is no user or assistant text', async () => {
    const storage = new MapMemoryStorage();
    const provider = fakeProvider([answerOf([{ content: 'never' }])]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const messages: Message[] = [
      { type: 'user', content: [{ type: 'text', text: '   ' }] },
      { type: 'tool_call', callId: 'c1', toolName: 'read', arguments: {} },
      { type: 'tool_result', callId: 'c1', content: 'file text', isError: false },
      { type: 'system', content: 'notice' },
    ];
    expect(await manager.extract({ ...base, messages, provider })).toEqual([]);
    expect(await manager.extract({ ...base, messages: [], provider })).toEqual([]);
    expect(provider.requests).toHaveLength(0);
    expect(storage.calls).toEqual([]);
  });

  it('reports a malformed answer as MEMORY_ERROR and saves nothing', async () => {
    const storage = new MapMemoryStorage();
    const provider = fakeProvider(['I think the user likes tea.']);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('MEMORY_ERROR');
    expect(storage.memories.size).toBe(0);
  });

  it('lets a provider failure through as PROVIDER_ERROR', async () => {
    const storage = new MapMemoryStorage();
    const provider = fakeProvider([new Error('503 upstream')]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toContain('503 upstream');
  });

  it('rejects with REQUEST_CANCELLED when the signal is already aborted', async () => {
    const storage = new MapMemoryStorage();
    const provider = fakeProvider([answerOf([{ content: 'x' }])]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const controller = new AbortController();
    controller.abort();
    const error = await rejectionOf(
      manager.extract({ ...base, signal: controller.signal, messages: conversation, provider }),
    );
    expect(error.code).toBe('REQUEST_CANCELLED');
    expect(storage.memories.size).toBe(0);
  });

  it.each(['search', 'save'] as const)('wraps a failing %s as STORAGE_ERROR', async (failOn) => {
    const storage = new MapMemoryStorage();
    storage.failOn = failOn;
    const provider = fakeProvider([answerOf([{ content: 'Likes tea.' }])]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 10 });
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('STORAGE_ERROR');
    expect(error.sourceComponent).toBe('storage');
  });

  it('does not consolidate while the namespace is at maxItems', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['one', 'two']);
    const provider = fakeProvider([answerOf([{ content: 'three' }])]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 3 });
    await manager.extract({ ...base, messages: conversation, provider });
    expect(provider.requests.map((request) => request.purpose)).toEqual(['memory_extraction']);
    expect(storage.contents()).toEqual(['one', 'three', 'two']);
  });

  it('consolidates above maxItems, saving the merged memories before deleting the old ones', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['Likes tea.', 'Likes green tea.', 'Uses vim.']);
    storage.seed(['untouched'], 'other');
    const provider = fakeProvider([
      answerOf([{ content: 'Works at ACME.', category: 'fact' }]),
      answerOf([
        { content: 'Likes green tea.', category: 'preference' },
        { content: 'uses vim.' },
        { content: 'Works at ACME.', category: 'fact' },
        { content: 'One too many.' },
      ]),
    ]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 3 });
    const saved = await manager.extract({ ...base, messages: conversation, provider });
    expect(saved.map((memory) => memory.content)).toEqual(['Works at ACME.']);

    const consolidation = provider.requests[1]!;
    expect(consolidation.purpose).toBe('memory_consolidation');
    expect(consolidation.modelId).toBe('memory-model');
    expect(consolidation.systemPrompt).toContain('at most 3 remain');
    const input = consolidation.messages[0];
    const inputText =
      input?.type === 'user' && input.content[0]?.type === 'text' ? input.content[0].text : '';
    expect(inputText).toContain(
      '- [fact] Works at ACME.\n- [fact] Uses vim.\n- [fact] Likes green tea.\n- [fact] Likes tea.',
    );

    expect(storage.contents()).toEqual(['Likes green tea.', 'Works at ACME.', 'uses vim.']);
    expect(storage.contents('other')).toEqual(['untouched']);
    const remaining = await storage.search('ns', '', Infinity);
    expect(remaining.every((memory) => !memory.id.startsWith('seed-'))).toBe(true);
    const vim = remaining.find((memory) => memory.content === 'uses vim.');
    expect(vim?.sourceSessionId).toBe('old-session');
    // Every save of the merged set happens before the first delete.
    const lastSave = storage.calls.lastIndexOf('save');
    const firstDelete = storage.calls.indexOf('delete');
    expect(firstDelete).toBeGreaterThan(lastSave);
  });

  it('keeps every memory when the consolidation answer is malformed', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['one', 'two']);
    const provider = fakeProvider([answerOf([{ content: 'three' }]), 'Here is the merged list: one, two']);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 2 });
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('MEMORY_ERROR');
    expect(storage.contents()).toEqual(['one', 'three', 'two']);
    expect(storage.calls).not.toContain('delete');
  });

  it('treats an empty consolidation answer as MEMORY_ERROR and deletes nothing', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['one', 'two']);
    const provider = fakeProvider([answerOf([{ content: 'three' }]), '{"memories": []}']);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 2 });
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('MEMORY_ERROR');
    expect(error.message).toContain('no memories');
    expect(storage.contents()).toEqual(['one', 'three', 'two']);
  });

  it('loses nothing when a save fails part-way through consolidation', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['one', 'two', 'three']);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 2 });
    const provider = fakeProvider([answerOf([{ content: 'four' }]), answerOf([{ content: 'merged' }])]);
    const originalSave = storage.save.bind(storage);
    let saves = 0;
    storage.save = async (memory) => {
      saves += 1;
      // The extracted memory saves; the merged one fails.
      if (saves === 2) throw new Error('disk full');
      await originalSave(memory);
    };
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('STORAGE_ERROR');
    expect(provider.requests.map((request) => request.purpose)).toEqual([
      'memory_extraction',
      'memory_consolidation',
    ]);
    expect(storage.contents()).toEqual(['four', 'one', 'three', 'two']);
    expect(storage.calls).not.toContain('delete');
  });

  it('lets a provider failure during consolidation through and deletes nothing', async () => {
    const storage = new MapMemoryStorage();
    storage.seed(['one', 'two']);
    const provider = fakeProvider([
      answerOf([{ content: 'three' }]),
      new AgentError({ code: 'PROVIDER_ERROR', message: 'rate limited', retryable: true }),
    ]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 2 });
    const error = await rejectionOf(manager.extract({ ...base, messages: conversation, provider }));
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.retryable).toBe(true);
    expect(storage.contents()).toEqual(['one', 'three', 'two']);
  });

  it('works end to end against InMemoryMemoryStorage', async () => {
    const storage = new InMemoryMemoryStorage();
    const provider = fakeProvider([
      answerOf([{ content: 'Likes tea.' }, { content: 'Uses vim.', category: 'preference' }]),
      answerOf([{ content: 'Likes tea.' }, { content: 'Works at ACME.' }]),
      answerOf([{ content: 'Likes tea and works at ACME.', category: 'fact' }, { content: 'Uses vim.' }]),
    ]);
    const manager = new MemoryManager({ storage, namespace: 'ns', maxItems: 2 });
    await manager.extract({ ...base, messages: conversation, provider });
    const saved = await manager.extract({
      ...base,
      sessionId: 'session-2',
      messages: conversation,
      provider,
    });
    expect(saved.map((memory) => memory.content)).toEqual(['Works at ACME.']);
    const loaded = await manager.load();
    expect(loaded.map((memory) => memory.content).sort()).toEqual([
      'Likes tea and works at ACME.',
      'Uses vim.',
    ]);
    expect(loaded.find((memory) => memory.content === 'Uses vim.')?.sourceSessionId).toBe('session-1');
    expect(await storage.search('ns', '', Infinity)).toHaveLength(2);
  });
});
