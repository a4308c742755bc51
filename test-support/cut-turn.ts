/**
 * The turn the crash tests of issue 26 cut: its script, its tools and its agent, shared by the child processes that
 * are killed (the SQLite and PostgreSQL fixtures) and by the tests that continue the turn, or run it whole.
 * The turn: an answer with a read-only and a mutating call, an answer with one more read-only call (whose large
 * result makes the next model call compact first), then the final answer.
 */
import { appendFile } from 'node:fs/promises';
import {
  type Agent,
  AgentBuilder,
  type AgentError,
  type SessionStorage,
  type ToolHandler,
} from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '@youyou/agent/testing';

/**
 * Where the child is killed: the model stream, the mutating call as it runs, the approval of the mutating call
 * (the child's tool needs one and its approver never answers), the next model call, the compaction.
 */
export type CutPoint = 'stream' | 'mutating-call' | 'approval' | 'after-results' | 'compaction';

/** The cut points, each with the line the child prints when it is there. */
export const CUT_POINTS: Record<CutPoint, string> = {
  stream: 'STREAMING',
  'mutating-call': 'TOOL_RUNNING',
  approval: 'APPROVAL_ASKED',
  'after-results': 'MODEL_CALLED',
  compaction: 'COMPACTING',
};

/** The first message of the cut turn. */
export const CUT_TURN_INPUT = 'do the work';

/** The turn's model answers, in order. */
export const TURN_SCRIPT: ScriptedResponse[] = [
  [
    { type: 'text', text: 'Working on it.' },
    { type: 'tool_call', callId: 'c1', toolName: 'lookup', arguments: { q: 'a' } },
    { type: 'tool_call', callId: 'c2', toolName: 'append_line', arguments: { line: 'one' } },
  ],
  [{ type: 'tool_call', callId: 'c3', toolName: 'lookup', arguments: { q: 'big' } }],
  [{ type: 'text', text: 'All done.' }],
];

/** The compaction's answer. */
export const SUMMARY: ScriptedResponse = [{ type: 'text', text: 'Summary: the work is under way.' }];

/** The model call of each cut point's script that the continuation asks first (0 = the turn's first). */
export const CONTINUES_AT: Record<CutPoint, number> = {
  stream: 0,
  'mutating-call': 1,
  approval: 1,
  'after-results': 1,
  compaction: 2,
};

/** A child's script: the same turn, stopped at `point` (it prints its line, then waits until it is killed). */
export function cutScript(
  point: CutPoint,
  say: (line: string) => void,
): {
  responses: ScriptedResponse[];
  compaction: ScriptedResponse[];
} {
  const responses = TURN_SCRIPT.slice();
  const stopHere =
    (line: string): ScriptedResponse =>
    () => {
      say(line);
      return [{ type: 'hang' }];
    };
  if (point === 'stream') {
    responses[0] = () => {
      say(CUT_POINTS.stream);
      return [{ type: 'text', text: 'Work' }, { type: 'hang' }];
    };
  }
  if (point === 'after-results') responses[1] = stopHere(CUT_POINTS['after-results']);
  return { responses, compaction: [point === 'compaction' ? stopHere(CUT_POINTS.compaction) : SUMMARY] };
}

/** The side effects of `append_line`, one line per run, in the file at `effectsPath`. */
export function cutTools(options: {
  effectsPath: string;
  blockMutating?: () => void;
  /** The mutating tool needs approval (the child at the `approval` point). */
  mutatingNeedsApproval?: boolean;
}): ToolHandler[] {
  const lookup: ToolHandler = {
    name: 'lookup',
    description: 'looks a word up',
    parametersSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    isMutating: false,
    execute: async (input) => {
      const { q } = input.arguments as { q: string };
      return { content: q === 'big' ? `found ${'x'.repeat(6_000)}` : `found ${q}`, isError: false };
    },
  };
  const appendLine: ToolHandler = {
    name: 'append_line',
    description: 'appends a line to the effects file',
    parametersSchema: { type: 'object', properties: { line: { type: 'string' } }, required: ['line'] },
    isMutating: true,
    needsApproval: options.mutatingNeedsApproval === true,
    execute: async (input) => {
      const { line } = input.arguments as { line: string };
      await appendFile(options.effectsPath, `${line}\n`);
      // The effect is on disk; a crash from here on leaves the call without a result.
      if (options.blockMutating !== undefined) {
        options.blockMutating();
        return new Promise(() => {});
      }
      return { content: `appended ${line}`, isError: false };
    },
  };
  return [lookup, appendLine];
}

/** An agent on `storage` with the cut turn's tools and a scripted model of a small window (so it compacts). */
export async function cutAgent(options: {
  storage: SessionStorage;
  responses: readonly ScriptedResponse[];
  compaction: readonly ScriptedResponse[];
  tools: ToolHandler[];
}): Promise<{ agent: Agent; provider: ScriptedModelProvider; background: AgentError[] }> {
  const background: AgentError[] = [];
  const provider = new ScriptedModelProvider({
    models: [scriptedModel({ contextWindow: 6_000 })],
    responses: options.responses,
    byPurpose: { compaction: options.compaction },
  });
  const builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
    compactThreshold: 0.2,
  })
    .registerModelProvider(provider)
    .registerSessionStorage(options.storage);
  for (const tool of options.tools) builder.registerTool(tool);
  return { agent: await builder.build(), provider, background };
}
