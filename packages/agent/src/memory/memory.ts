import { randomUUID } from 'node:crypto';
import { AgentError, toAgentError } from '../kernel/error.js';
import {
  fillTemplate,
  MEMORY_CONSOLIDATION_INPUT_TEMPLATE,
  MEMORY_CONSOLIDATION_PROMPT,
  MEMORY_EXTRACTION_INPUT_TEMPLATE,
  MEMORY_EXTRACTION_PROMPT,
} from '../kernel/templates.js';
import { renderTranscript } from '../kernel/transcript.js';
import type { Message } from '../kernel/types.js';
import { cancelledError, collectText, internalRequest } from '../model/model-call.js';
import type { UsageSink } from '../model/usage-sink.js';
import type { ChatRequest, ModelProvider, ResponseFormat } from '../ports/model.js';
import type { Memory, MemoryStorage } from '../ports/storage.js';

/** One memory as the model answered it, before it is stored. */
interface ExtractedMemory {
  content: string;
  category?: string;
}

/**
 * The answer's shape, sent as `responseFormat` to a model that honours it. `category` is required but may be
 * null, so the schema meets OpenAI's strict rules; a null category is dropped like any non-string one.
 */
export const MEMORY_RESPONSE_FORMAT: ResponseFormat = {
  type: 'json_schema',
  name: 'memories',
  description: 'The long-term memories to keep.',
  strict: true,
  schema: {
    type: 'object',
    properties: {
      memories: {
        type: 'array',
        items: {
          type: 'object',
          properties: { content: { type: 'string' }, category: { type: ['string', 'null'] } },
          required: ['content', 'category'],
          additionalProperties: false,
        },
      },
    },
    required: ['memories'],
    additionalProperties: false,
  },
};

/**
 * Asks for the memory answer's shape where the model holds its answer to a schema (its
 * `capabilities.structuredOutput`); other models get only the prompt's description, and the answer is dug
 * out of their prose by `parseMemoryAnswer`, which reads a structured answer just as well.
 */
function withMemoryFormat(request: ChatRequest, provider: ModelProvider): ChatRequest {
  const model = provider.models.find((info) => info.id === request.modelId);
  if (model?.capabilities.structuredOutput !== true) return request;
  return { ...request, responseFormat: MEMORY_RESPONSE_FORMAT };
}

/** How much of a bad answer an error message shows. */
const ANSWER_PREVIEW_LENGTH = 200;
/** Bounds the brace scan, so a long answer full of stray `{` cannot take quadratic time. */
const MAX_OBJECT_CANDIDATES = 100;

/** Why a candidate was not usable; a higher rank is the more specific diagnosis to report. */
interface Rejection {
  rank: number;
  reason: string;
}

type Interpretation = { memories: ExtractedMemory[] } | Rejection;

function memoryError(reason: string, text: string): AgentError {
  const preview = text.length > ANSWER_PREVIEW_LENGTH ? `${text.slice(0, ANSWER_PREVIEW_LENGTH)}…` : text;
  return new AgentError({
    code: 'MEMORY_ERROR',
    message: `unusable memory answer: ${reason}; the answer began with: ${JSON.stringify(preview)}`,
  });
}

function tryParseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

function interpretEntries(entries: readonly unknown[]): Interpretation {
  const memories: ExtractedMemory[] = [];
  for (const [index, entry] of entries.entries()) {
    if (typeof entry === 'string') {
      memories.push({ content: entry });
      continue;
    }
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      return { rank: 3, reason: `memory entry ${index} is neither an object nor a string` };
    }
    const record = entry as Record<string, unknown>;
    if (typeof record.content !== 'string') {
      return { rank: 3, reason: `memory entry ${index} has no string "content"` };
    }
    const memory: ExtractedMemory = { content: record.content };
    // A category of the wrong type is dropped rather than failing an otherwise good memory.
    if (typeof record.category === 'string') memory.category = record.category;
    memories.push(memory);
  }
  return { memories };
}

function interpretValue(value: unknown, allowBareArray: boolean): Interpretation {
  if (Array.isArray(value)) {
    return allowBareArray ? interpretEntries(value) : { rank: 1, reason: 'the JSON has no "memories" array' };
  }
  if (typeof value !== 'object' || value === null || !('memories' in value)) {
    return { rank: 1, reason: 'the JSON has no "memories" array' };
  }
  const memories = (value as { memories: unknown }).memories;
  if (!Array.isArray(memories)) return { rank: 2, reason: '"memories" is not an array' };
  return interpretEntries(memories);
}

/** The index of the `}` closing the object that opens at `start`, skipping braces inside strings. */
function findObjectEnd(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let index = start; index < text.length; index += 1) {
    const character = text[index];
    if (inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
    } else if (character === '"') {
      inString = true;
    } else if (character === '{') {
      depth += 1;
    } else if (character === '}') {
      depth -= 1;
      if (depth === 0) return index;
    }
  }
  return undefined;
}

/** Balanced `{...}` spans in the order they open, so an outer object is tried before the ones inside it. */
function* objectCandidates(text: string): Generator<string, void, undefined> {
  let tried = 0;
  for (let start = text.indexOf('{'); start !== -1; start = text.indexOf('{', start + 1)) {
    if (tried >= MAX_OBJECT_CANDIDATES) return;
    tried += 1;
    const end = findObjectEnd(text, start);
    if (end !== undefined) yield text.slice(start, end + 1);
  }
}

function fencedBlocks(text: string): string[] {
  const blocks: string[] = [];
  for (const match of text.matchAll(/```[\w-]*[^\S\n]*\n?([\s\S]*?)```/g)) {
    const body = match[1]?.trim();
    if (body) blocks.push(body);
  }
  return blocks;
}

/** Parses a model's memory answer robustly; throws AgentError MEMORY_ERROR for anything unusable. */
export function parseMemoryAnswer(text: string): ExtractedMemory[] {
  const trimmed = typeof text === 'string' ? text.trim() : '';
  if (trimmed === '') throw memoryError('the answer is empty', String(text ?? ''));
  let best: Rejection = { rank: 0, reason: 'the answer holds no JSON' };
  const consider = (candidate: string, allowBareArray: boolean): ExtractedMemory[] | undefined => {
    const parsed = tryParseJson(candidate);
    if (parsed === undefined) return undefined;
    const result = interpretValue(parsed.value, allowBareArray);
    if ('memories' in result) return result.memories;
    if (result.rank > best.rank) best = result;
    return undefined;
  };
  // A bare array counts only when it is the whole answer or a whole fenced block; an array
  // picked out of prose is too likely to be something else.
  const whole = consider(trimmed, true);
  if (whole) return whole;
  for (const block of fencedBlocks(trimmed)) {
    const found = consider(block, true);
    if (found) return found;
  }
  for (const candidate of objectCandidates(trimmed)) {
    const found = consider(candidate, false);
    if (found) return found;
  }
  throw memoryError(best.reason, trimmed);
}

function normalise(content: string): string {
  return content.trim().toLowerCase();
}

function hasConversationText(messages: readonly Message[]): boolean {
  return messages.some(
    (message) =>
      (message.type === 'user' || message.type === 'assistant') &&
      message.content.some((block) => block.type === 'text' && block.text.trim() !== ''),
  );
}

/** Trims, drops empty entries and entries already in `seen` (which it extends), keeping the order. */
function cleanEntries(entries: readonly ExtractedMemory[], seen: Set<string>): ExtractedMemory[] {
  const kept: ExtractedMemory[] = [];
  for (const entry of entries) {
    const content = entry.content.trim();
    const key = normalise(content);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    const category = entry.category?.trim();
    kept.push(category ? { content, category } : { content });
  }
  return kept;
}

/** What `MemoryManager.extract` takes. */
interface ExtractMemoriesOptions {
  /** The conversation since the last checkpoint. */
  messages: readonly Message[];
  provider: ModelProvider;
  modelId: string;
  /** Recorded as `sourceSessionId` on every memory saved. */
  sessionId: string;
  signal: AbortSignal;
  /** Takes the usage of the extraction and consolidation requests. */
  onUsage?: UsageSink;
}

/**
 * Loads, extracts and consolidates the long-term memories of one namespace. Every method rejects with
 * an AgentError: MEMORY_ERROR for an unusable model answer, STORAGE_ERROR for a storage failure, and
 * the model call's own PROVIDER_ERROR or REQUEST_CANCELLED.
 */
export class MemoryManager {
  /** The namespace every memory is read from and saved to. */
  readonly namespace: string;
  private readonly storage: MemoryStorage;
  private readonly maxItems: number;

  constructor(options: { storage: MemoryStorage; namespace: string; maxItems: number }) {
    this.storage = options.storage;
    this.namespace = options.namespace;
    this.maxItems = options.maxItems;
  }

  /** The same manager on another namespace: a session's own, when it names one. */
  inNamespace(namespace: string): MemoryManager {
    return new MemoryManager({ storage: this.storage, namespace, maxItems: this.maxItems });
  }

  /** The memories shown in the prompt: the namespace's most recent, at most `maxItems`. */
  load(): Promise<Memory[]> {
    return this.store(() => this.storage.search(this.namespace, '', this.maxItems));
  }

  /**
   * Asks the model for memories from `messages`, saves them, consolidates when the namespace holds
   * more than maxItems. Returns what was saved. A failed consolidation rejects, but what was saved
   * before it stays saved.
   */
  async extract(options: ExtractMemoriesOptions): Promise<Memory[]> {
    if (!hasConversationText(options.messages)) return [];
    if (options.signal.aborted) throw cancelledError();
    const request = withMemoryFormat(
      internalRequest({
        modelId: options.modelId,
        purpose: 'memory_extraction',
        sessionId: options.sessionId,
        systemPrompt: MEMORY_EXTRACTION_PROMPT,
        userText: fillTemplate(MEMORY_EXTRACTION_INPUT_TEMPLATE, {
          transcript: renderTranscript(options.messages),
        }),
      }),
      options.provider,
    );
    const answer = await collectText({
      provider: options.provider,
      request,
      signal: options.signal,
      onUsage: options.onUsage,
    });
    const extracted = parseMemoryAnswer(answer.text);

    const existing = await this.store(() => this.storage.search(this.namespace, '', Infinity));
    const seen = new Set(existing.map((memory) => normalise(memory.content)));
    const now = new Date();
    const saved: Memory[] = [];
    for (const entry of cleanEntries(extracted, seen)) {
      const memory = this.newMemory({ entry, now, sourceSessionId: options.sessionId });
      await this.store(() => this.storage.save(memory));
      saved.push(memory);
    }

    if (existing.length + saved.length > this.maxItems) await this.consolidate(options);
    return saved;
  }

  /**
   * Has the model merge the namespace down to at most maxItems. The merged memories are saved before
   * any old one is deleted, so a failure part-way leaves duplicates (merged again next time), never a loss.
   */
  private async consolidate(options: ExtractMemoriesOptions): Promise<void> {
    const current = await this.store(() => this.storage.search(this.namespace, '', Infinity));
    if (current.length <= this.maxItems) return;
    const memoryLines = current.map((memory) =>
      memory.category ? `- [${memory.category}] ${memory.content}` : `- ${memory.content}`,
    );
    const request = withMemoryFormat(
      internalRequest({
        modelId: options.modelId,
        purpose: 'memory_consolidation',
        sessionId: options.sessionId,
        systemPrompt: fillTemplate(MEMORY_CONSOLIDATION_PROMPT, { maxItems: this.maxItems }),
        userText: fillTemplate(MEMORY_CONSOLIDATION_INPUT_TEMPLATE, { memories: memoryLines.join('\n') }),
      }),
      options.provider,
    );
    const answer = await collectText({
      provider: options.provider,
      request,
      signal: options.signal,
      onUsage: options.onUsage,
    });
    const merged = cleanEntries(parseMemoryAnswer(answer.text), new Set()).slice(0, this.maxItems);
    if (merged.length === 0) {
      // A model that answers "nothing" for a full store has misread the task; wiping the store would
      // lose everything the user taught the agent.
      throw memoryError('consolidation returned no memories for a non-empty store', answer.text);
    }

    // A memory the model kept word for word keeps the session it came from.
    const sources = new Map<string, string>();
    for (const memory of current) {
      const key = normalise(memory.content);
      if (memory.sourceSessionId !== undefined && !sources.has(key)) {
        sources.set(key, memory.sourceSessionId);
      }
    }
    const now = new Date();
    for (const entry of merged) {
      const memory = this.newMemory({
        entry,
        now,
        sourceSessionId: sources.get(normalise(entry.content)),
      });
      await this.store(() => this.storage.save(memory));
    }
    for (const memory of current) {
      await this.store(() => this.storage.delete(memory.id));
    }
  }

  private newMemory(options: {
    entry: ExtractedMemory;
    now: Date;
    sourceSessionId: string | undefined;
  }): Memory {
    const memory: Memory = {
      id: randomUUID(),
      namespace: this.namespace,
      content: options.entry.content,
      createdAt: new Date(options.now),
      updatedAt: new Date(options.now),
    };
    if (options.entry.category) memory.category = options.entry.category;
    if (options.sourceSessionId !== undefined) memory.sourceSessionId = options.sourceSessionId;
    return memory;
  }

  /** Runs one storage call; whatever it throws comes out as STORAGE_ERROR. */
  private async store<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      throw toAgentError(error, 'STORAGE_ERROR', 'memory storage');
    }
  }
}
