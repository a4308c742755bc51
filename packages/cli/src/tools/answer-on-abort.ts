import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { errorText } from './workspace.js';

/**
 * The core waits for a cancelled tool until it settles (at most `toolTimeoutMs`, two minutes by default): a
 * tool that ignores its signal (an MCP server that never answers, a tool stuck in a system call) would keep a
 * Ctrl-C from giving the prompt back. Every tool of the CLI is wrapped so that its call answers as soon as
 * its signal fires, with an error result saying so; whatever the tool still does is left to finish on its
 * own, and its late answer is dropped.
 */

/** `tool`, answering at once when its call's signal fires, whether or not the tool itself stops. */
export function answerOnAbort(tool: ToolHandler): ToolHandler {
  return {
    name: tool.name,
    description: tool.description,
    parametersSchema: tool.parametersSchema,
    isMutating: tool.isMutating,
    execute: (input) => executeUntilAborted(tool, input),
  };
}

function executeUntilAborted(tool: ToolHandler, input: ToolInput): Promise<ToolOutput> {
  const { signal } = input;
  if (signal.aborted) return Promise.resolve(stopped(tool, signal));
  const answer = Promise.resolve().then(() => tool.execute(input));
  return new Promise<ToolOutput>((resolve, reject) => {
    const onAbort = (): void => resolve(stopped(tool, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(
      (output) => {
        signal.removeEventListener('abort', onAbort);
        resolve(output);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function stopped(tool: ToolHandler, signal: AbortSignal): ToolOutput {
  const reason = signal.reason === undefined ? 'the call was cancelled' : errorText(signal.reason);
  return {
    content: `${tool.name} was stopped (${reason}); it may not have finished what it started`,
    isError: true,
  };
}
