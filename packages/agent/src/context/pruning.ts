/**
 * Pruning: before a compaction summarises anything, the results of old tool calls (those before the last few
 * user turns) are replaced by a short stub that names the call, the size of its result and its first line, as
 * OpenCode and Claude's context editing do. The stub is computed from the messages alone, so a resume that
 * applies the same call ids rebuilds the same view.
 */

import { argumentsText } from '../kernel/transcript.js';
import type { Message } from '../kernel/types.js';

/** Tool results of the last this many user turns are never pruned. */
const PRUNE_KEEP_TURNS = 2;
/** A result shorter than this is left alone: its stub would save next to nothing. */
const PRUNE_MIN_CHARS = 1_000;
/** The most characters of the call's arguments and of the first line a stub repeats. */
const STUB_EXCERPT_CHARS = 160;

function excerpt(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= STUB_EXCERPT_CHARS ? oneLine : `${oneLine.slice(0, STUB_EXCERPT_CHARS)}…`;
}

/** The text that replaces a pruned tool result: the call, the size of its result and its first line. */
function prunedStub(call: Message | undefined, content: string, isError: boolean): string {
  const name = call?.type === 'tool_call' ? call.toolName : 'a tool';
  const args = call?.type === 'tool_call' ? excerpt(argumentsText(call.arguments)) : '';
  const firstLine = excerpt(content.slice(0, content.indexOf('\n') === -1 ? 1_000 : content.indexOf('\n')));
  return (
    `[Old tool result cleared to save context: ${name}(${args}) returned ${content.length} characters` +
    `${isError ? ' (an error)' : ''}; its first line was: ${firstLine}. Call the tool again if it is needed.]`
  );
}

/** The call ids of the tool results pruning would clear: big ones before the last `keepTurns` user turns. */
export function prunableCallIds(messages: readonly Message[], keepTurns = PRUNE_KEEP_TURNS): string[] {
  let boundary = messages.length;
  let turns = 0;
  while (boundary > 0 && turns < keepTurns) {
    boundary -= 1;
    if (messages[boundary]?.type === 'user') turns += 1;
  }
  if (turns < keepTurns) return [];
  const ids: string[] = [];
  for (let index = 0; index < boundary; index += 1) {
    const message = messages[index];
    if (message?.type === 'tool_result' && message.content.length >= PRUNE_MIN_CHARS)
      ids.push(message.callId);
  }
  return ids;
}

/** The messages with the results of `callIds` replaced by their stubs; the same array when none is there. */
export function applyPruning(messages: readonly Message[], callIds: ReadonlySet<string>): readonly Message[] {
  if (callIds.size === 0) return messages;
  const calls = new Map<string, Message>();
  let changed = false;
  const pruned = messages.map((message): Message => {
    if (message.type === 'tool_call') calls.set(message.callId, message);
    if (message.type !== 'tool_result' || !callIds.has(message.callId)) return message;
    changed = true;
    const content = prunedStub(calls.get(message.callId), message.content, message.isError);
    return { ...message, content };
  });
  return changed ? pruned : messages;
}
