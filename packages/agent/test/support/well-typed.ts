/** Checks that what a turn emitted and what the storage holds are well-typed, whatever the provider sent. */
import { expect } from 'vitest';
import type { AgentErrorCode, AgentEvent, ContentBlock, SessionEvent } from '../../src/index.js';

/** Every AgentErrorCode; an error event with any other code fails the check. */
export const KNOWN_CODES: readonly AgentErrorCode[] = [
  'NO_MODEL_PROVIDER',
  'NAME_CONFLICT',
  'SKILL_DEPENDENCY_NOT_MET',
  'PLUGIN_INIT_FAILED',
  'STORAGE_DUPLICATE',
  'INVALID_DEFAULT_MODEL',
  'SESSION_BUSY',
  'TURN_BUSY',
  'MODEL_NOT_SUPPORTED',
  'PROVIDER_ERROR',
  'TOOL_EXECUTION_ERROR',
  'TOOL_TIMEOUT',
  'TOOL_NOT_FOUND',
  'SKILL_NOT_FOUND',
  'SESSION_NOT_FOUND',
  'STORAGE_ERROR',
  'MAX_TOOL_CALLS_EXCEEDED',
  'COMPACT_ERROR',
  'REQUEST_CANCELLED',
  'INVALID_INPUT',
  'INVALID_CONFIG',
  'PLUGIN_ERROR',
  'MEMORY_ERROR',
  'SESSION_CLOSED',
  'INTERNAL_ERROR',
];

function expectString(value: unknown, where: string): void {
  expect(typeof value, `${where} must be a string`).toBe('string');
}

function checkBlocks(blocks: unknown, where: string): void {
  expect(Array.isArray(blocks), `${where} must be an array`).toBe(true);
  for (const [index, block] of (blocks as ContentBlock[]).entries()) {
    const at = `${where}[${index}]`;
    if (block.type === 'text') expectString(block.text, `${at}.text`);
    else if (block.type === 'reasoning') {
      expectString(block.text, `${at}.text`);
      if ('signature' in block) expectString(block.signature, `${at}.signature`);
    } else if (block.type === 'image') {
      expectString(block.data, `${at}.data`);
      expectString(block.mediaType, `${at}.mediaType`);
    } else {
      expect.fail(`${at} has the unknown type ${JSON.stringify((block as { type: unknown }).type)}`);
    }
  }
}

/** Every saved event has the types of SessionEventPayload; no "undefined" or "[object Object]" text anywhere. */
export function expectWellTypedLog(events: readonly SessionEvent[]): void {
  for (const [index, event] of events.entries()) {
    const payload = event.payload;
    const at = `event ${index} (${payload.type})`;
    switch (payload.type) {
      case 'user_message':
      case 'assistant_message':
        checkBlocks(payload.content, `${at}.content`);
        break;
      case 'tool_call':
        expectString(payload.callId, `${at}.callId`);
        expect(payload.callId).not.toBe('');
        expectString(payload.toolName, `${at}.toolName`);
        break;
      case 'tool_result':
        expectString(payload.callId, `${at}.callId`);
        expectString(payload.content, `${at}.content`);
        expect(typeof payload.isError).toBe('boolean');
        break;
      case 'system_message':
        expectString(payload.content, `${at}.content`);
        break;
      case 'metadata':
        expectString(payload.key, `${at}.key`);
        break;
      default:
        expect.fail(`${at} has an unknown payload type`);
    }
  }
  const text = JSON.stringify(events);
  expect(text).not.toContain('[object Object]');
}

/**
 * The event invariants of a turn: one terminal event, last; tool_call_start/end paired, a call's output deltas
 * between them; every error coded.
 */
export function expectTurnInvariants(events: readonly AgentEvent[]): void {
  const terminal = events.filter(
    (event) => event.payload.type === 'turn_complete' || event.payload.type === 'turn_cancelled',
  );
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
  const open = new Map<string, string>();
  for (const event of events) {
    const payload = event.payload;
    if (payload.type === 'text_delta' || payload.type === 'reasoning_delta')
      expectString(payload.text, 'delta');
    if (payload.type === 'tool_call_start') {
      expectString(payload.callId, 'tool_call_start.callId');
      expectString(payload.toolName, 'tool_call_start.toolName');
      expect(open.has(payload.callId), `tool_call_start ${payload.callId} twice`).toBe(false);
      open.set(payload.callId, payload.toolName);
    }
    if (payload.type === 'tool_output_delta') {
      expect(open.has(payload.callId), `tool_output_delta of ${payload.callId} outside its call`).toBe(true);
      expectString(payload.text, 'tool_output_delta.text');
    }
    if (payload.type === 'tool_call_end') {
      expect(open.get(payload.callId), `tool_call_end ${payload.callId} without its start`).toBe(
        payload.toolName,
      );
      open.delete(payload.callId);
    }
    if (payload.type === 'error') {
      expect(KNOWN_CODES).toContain(payload.error.code);
      expect(payload.error.message.startsWith(`[${payload.error.code}] `)).toBe(true);
    }
  }
  expect([...open.keys()], 'tool calls started and never ended').toEqual([]);
}
