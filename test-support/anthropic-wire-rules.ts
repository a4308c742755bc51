/**
 * The Messages API's rules for a request body, checked as the server would: a list of what breaks them
 * (empty when the body is valid). Used by the provider tests on every body the wire server receives.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function blocksOf(message: Json): Json[] {
  const content = message.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isObject) : [];
}

function checkText(block: Json, where: string, problems: string[]): void {
  if (typeof block.text !== 'string' || block.text.trim() === '') {
    problems.push(`${where}: a text block must hold non-whitespace text`);
  }
}

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const THINKING = new Set(['thinking', 'redacted_thinking']);

function checkUser(blocks: Json[], where: string, previousCalls: Set<string>, problems: string[]): void {
  let seenOther = false;
  const answered = new Set<string>();
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      if (seenOther) problems.push(`${where}: tool_result blocks must come before any other content`);
      const id = String(block.tool_use_id);
      if (!previousCalls.has(id))
        problems.push(`${where}: tool_result ${id} has no tool_use in the previous message`);
      if (answered.has(id)) problems.push(`${where}: tool_use ${id} is answered twice`);
      answered.add(id);
      if (typeof block.content === 'string' && block.content.trim() === '')
        problems.push(`${where}: tool_result ${id} has empty content`);
    } else {
      seenOther = true;
      if (block.type === 'text') checkText(block, where, problems);
      else if (block.type === 'image') {
        const source = isObject(block.source) ? block.source : {};
        if (source.type !== 'base64' || !IMAGE_TYPES.has(String(source.media_type)))
          problems.push(`${where}: an image needs a base64 source of a supported media type`);
      } else problems.push(`${where}: a user message cannot hold a ${String(block.type)} block`);
    }
  }
  for (const id of previousCalls) {
    if (!answered.has(id)) problems.push(`${where}: tool_use ${id} gets no tool_result in this message`);
  }
}

function checkAssistant(
  blocks: Json[],
  where: string,
  callIds: Set<string>,
  problems: string[],
): Set<string> {
  const calls = new Set<string>();
  let seenOther = false;
  for (const block of blocks) {
    if (THINKING.has(String(block.type))) {
      if (seenOther) problems.push(`${where}: thinking blocks must come first in an assistant message`);
      if (block.type === 'thinking' && typeof block.signature !== 'string')
        problems.push(`${where}: a thinking block needs its signature`);
      continue;
    }
    seenOther = true;
    if (block.type === 'text') checkText(block, where, problems);
    else if (block.type === 'tool_use') {
      const id = String(block.id);
      if (callIds.has(id)) problems.push(`${where}: tool_use id ${id} is used twice`);
      callIds.add(id);
      calls.add(id);
      if (!isObject(block.input)) problems.push(`${where}: tool_use ${id} input must be an object`);
    } else problems.push(`${where}: an assistant message cannot hold a ${String(block.type)} block`);
  }
  return calls;
}

/** What in a Messages request body breaks the API's rules; `[]` when nothing does. */
export function messagesApiViolations(body: unknown): string[] {
  const problems: string[] = [];
  if (!isObject(body)) return ['the body is not a JSON object'];
  if (typeof body.max_tokens !== 'number' || body.max_tokens < 1) problems.push('max_tokens is required');
  for (const removed of ['temperature', 'top_p', 'top_k']) {
    if (removed in body) problems.push(`${removed} is rejected by API version 2026-10-21`);
  }
  if (body.system !== undefined) {
    if (!Array.isArray(body.system)) problems.push('system must be a list of text blocks');
    else
      body.system.filter(isObject).forEach((block, index) => {
        checkText(block, `system[${index}]`, problems);
      });
  }
  const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : [];
  if (messages.length === 0) return [...problems, 'messages must not be empty'];
  if (messages[0]?.role !== 'user') problems.push('the first message must be a user message');
  if (messages.at(-1)?.role !== 'user') problems.push('the last message must be a user message');
  const callIds = new Set<string>();
  let previousCalls = new Set<string>();
  messages.forEach((message, index) => {
    const where = `messages[${index}] (${String(message.role)})`;
    const blocks = blocksOf(message);
    if (blocks.length === 0) problems.push(`${where}: content must not be empty`);
    if (index > 0 && messages[index - 1]?.role === message.role)
      problems.push(`${where}: roles must alternate`);
    if (message.role === 'user') {
      checkUser(blocks, where, previousCalls, problems);
      previousCalls = new Set();
    } else if (message.role === 'assistant') {
      if (previousCalls.size > 0) problems.push(`${where}: the previous tool_use blocks got no results`);
      previousCalls = checkAssistant(blocks, where, callIds, problems);
    } else {
      problems.push(`${where}: role must be user or assistant`);
    }
  });
  return problems;
}
