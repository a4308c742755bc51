import type { ToolHandler, ToolInput } from '@youyou/agent';
import { describe, expect, it } from 'vitest';
import { answerOnAbort } from '../../src/tools/answer-on-abort.js';

function toolThat(execute: ToolHandler['execute']): ToolHandler {
  return {
    name: 'stubborn',
    description: 'a tool for the test',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: true,
    execute,
  };
}

function input(signal: AbortSignal): ToolInput {
  return { callId: 'c1', arguments: {}, sessionId: 's1', turnId: 't1', signal };
}

describe('answerOnAbort', () => {
  it('answers at once when the signal fires, even when the tool ignores it and never settles', async () => {
    const wrapped = answerOnAbort(toolThat(() => new Promise(() => {})));
    const controller = new AbortController();
    const answer = wrapped.execute(input(controller.signal));
    setTimeout(() => controller.abort(new Error('the user pressed Ctrl-C')), 10);
    const started = performance.now();
    const output = await answer;
    expect(performance.now() - started).toBeLessThan(500);
    expect(output.isError).toBe(true);
    expect(output.content).toContain('the user pressed Ctrl-C');
  });

  it('passes on what the tool answers, and what it throws, while the signal is quiet', async () => {
    const signal = new AbortController().signal;
    const fine = answerOnAbort(toolThat(async () => ({ content: 'done', isError: false })));
    expect(await fine.execute(input(signal))).toEqual({ content: 'done', isError: false });
    const throwing = answerOnAbort(
      toolThat(() => {
        throw new Error('broken');
      }),
    );
    await expect(throwing.execute(input(signal))).rejects.toThrow('broken');
  });

  it('keeps the name, schema and mutating flag the approvals and the model see', () => {
    const original = toolThat(async () => ({ content: '', isError: false }));
    const wrapped = answerOnAbort(original);
    expect(wrapped).toMatchObject({
      name: original.name,
      description: original.description,
      parametersSchema: original.parametersSchema,
      isMutating: true,
    });
  });

  it('does not start a tool whose call was cancelled before it ran', async () => {
    let ran = false;
    const wrapped = answerOnAbort(
      toolThat(async () => {
        ran = true;
        return { content: '', isError: false };
      }),
    );
    const controller = new AbortController();
    controller.abort();
    expect((await wrapped.execute(input(controller.signal))).isError).toBe(true);
    expect(ran).toBe(false);
  });
});
