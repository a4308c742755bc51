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
    // Let the tool start (its execute runs a tick later), then cancel.
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('the user pressed Ctrl-C'));
    // "At once": the answer is there before the event loop's next turn, not when some timer fires.
    const notYet = Symbol('not answered before the next turn of the event loop');
    const output = await Promise.race([
      answer,
      new Promise<typeof notYet>((resolve) => setImmediate(resolve, notYet)),
    ]);
    if (output === notYet) throw new Error('answerOnAbort did not answer when the signal fired');
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
