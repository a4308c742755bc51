/** Helpers of the steering tests: a provider that pauses a chosen request, and the checks of a context. */
import { expect } from 'vitest';
import type {
  AgentEvent,
  ChatEvent,
  ChatRequest,
  Message,
  ModelProvider,
  RunningTurn,
  Session,
} from '../../src/index.js';
import type { ScriptedModelProvider } from '../../src/testing/index.js';
import { type Deferred, deferred } from './common.js';

/** Where a request pauses: after `afterEvents` of its events, until `gate` settles; `reached` says it got there. */
export interface Pause {
  afterEvents: number;
  gate: Promise<void>;
  reached: Deferred<void>;
}

/** A pause point for `pausingProvider`. */
export function pauseAt(afterEvents: number): Pause & { release: () => void } {
  const gate = deferred();
  return { afterEvents, gate: gate.promise, reached: deferred(), release: () => gate.resolve() };
}

/** The scripted provider, with the requests of the given indexes (in arrival order) paused. */
export function pausingProvider(
  scripted: ScriptedModelProvider,
  pauses: Record<number, Pause> | ((request: ChatRequest) => Pause | undefined),
): ModelProvider {
  let count = 0;
  return {
    id: scripted.id,
    models: scripted.models,
    async *chat(request, signal): AsyncGenerator<ChatEvent> {
      const pause = typeof pauses === 'function' ? pauses(request) : pauses[count];
      count += 1;
      let seen = 0;
      // Asked first, so that the scripted provider has recorded the request while it is paused.
      const stream = scripted.chat(request, signal);
      if (pause?.afterEvents === 0) {
        pause.reached.resolve();
        await pause.gate;
      }
      for await (const event of stream) {
        yield event;
        seen += 1;
        if (pause !== undefined && seen === pause.afterEvents) {
          pause.reached.resolve();
          await pause.gate;
        }
      }
    },
  };
}

/** The text of a message's text blocks. */
export function textOf(message: Message | undefined): string {
  if (message === undefined || !('content' in message) || typeof message.content === 'string') return '';
  return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
}

/** Every tool call has one result, and no other message comes between a batch's calls and their results. */
export function checkPairsIntact(messages: readonly Message[]): void {
  const open = new Set<string>();
  for (const message of messages) {
    if (message.type === 'tool_call') open.add(message.callId);
    else if (message.type === 'tool_result') {
      expect(open.has(message.callId), `result ${message.callId} without its call`).toBe(true);
      open.delete(message.callId);
    } else {
      expect([...open], `a ${message.type} message came between tool calls and their results`).toEqual([]);
    }
  }
  expect([...open]).toEqual([]);
}

/** Reads a turn, then every turn the session starts after it by itself (follow-ups), to the idle session. */
export async function readAllTurns(session: Session, first: RunningTurn): Promise<AgentEvent[][]> {
  const turns: AgentEvent[][] = [];
  let turn: RunningTurn | undefined = first;
  while (turn !== undefined) {
    const events: AgentEvent[] = [];
    for await (const event of turn) events.push(event);
    turns.push(events);
    await turn.done;
    const next = session.currentTurn;
    turn = next !== undefined && next.turnId !== turn.turnId ? next : undefined;
  }
  return turns;
}
