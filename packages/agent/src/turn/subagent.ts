/**
 * Sub-agents: a tool that runs a child session on the same agent, with its own instructions and context and
 * a subset of the tools, and answers with the child's final text, or with its structured output as JSON text
 * when the tool asks for one (issue 16). The child takes no
 * active-session slot; its events reach the caller's stream wrapped in `subagent` events; the caller's
 * cancellation (the tool's signal) cancels it; its log is saved and linked to the caller's.
 */

import { randomUUID } from 'node:crypto';
import type { ResolvedConfig } from '../kernel/config.js';
import { invalidConfig } from '../kernel/error.js';
import type { AgentEventPayload } from '../kernel/event.js';
import type { SessionConfig } from '../kernel/types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SubagentLink, SubagentParent } from '../log/subagent-links.js';
import type { RoutedModel } from '../model/model-router.js';
import {
  compileOutput,
  isOutputInvalidError,
  type OutputInvalidError,
  type OutputOptions,
  type StructuredOutputPlan,
} from '../output/structured-output.js';
import type { ToolHandler, ToolInput, ToolOutput } from '../ports/tool.js';
import { SkillManager } from '../skills/skill.js';
import { addTotals, copyUsageTotals, emptyUsageTotals } from '../usage/usage.js';
import type { TurnResult } from './running-turn.js';
import { type AgentRuntime, SessionState } from './session-state.js';
import type { RunTurn } from './turn-options.js';

/** What `agentTool` takes. */
export interface AgentToolOptions {
  /** The tool's name, as the model calls it. */
  name: string;
  /** What the model is told the sub-agent is for. */
  description: string;
  /** The child's system prompt (in place of the agent's systemInstructions and personality). */
  instructions: string;
  /** The child's model; default: the calling session's model. */
  model?: string;
  /** Names of the registered tools the child may call; default: none. */
  tools?: string[];
  /**
   * Makes the child's final answer structured output (a repair round included, as for `sendMessage`): the
   * tool result is then the parsed value as JSON text. Checked and compiled when the tool is made.
   */
  output?: OutputOptions;
  /** The child turn's tool-call limit; default: the agent's maxToolCallsPerTurn. */
  maxToolCalls?: number;
}

/** The options as kept by the tool, with the output schema compiled once. */
interface AgentToolSpec extends AgentToolOptions {
  /** The compiled `output`, when one is asked for. */
  plan?: StructuredOutputPlan;
}

const AGENT_TOOL = Symbol('youyou.agentTool');

/** A ToolHandler made by `agentTool`, before `build()` binds it to its agent. */
interface UnboundAgentTool extends ToolHandler {
  readonly [AGENT_TOOL]: Readonly<AgentToolSpec>;
}

const PARAMETERS = {
  type: 'object',
  properties: {
    task: { type: 'string', description: 'Everything the sub-agent needs to know to do the task' },
  },
  required: ['task'],
  additionalProperties: false,
} as const;

/**
 * A tool that runs a sub-agent: register it with `AgentBuilder.registerTool`. The model calls it with
 * `{ task }`; the answer is the child's final text, or its structured output as JSON text. Throws INVALID_CONFIG for bad options; `build()` checks
 * that `model` and `tools` name a registered model and tools.
 */
export function agentTool(options: AgentToolOptions): ToolHandler {
  if (typeof options !== 'object' || options === null) {
    throw invalidConfig(
      'agentTool takes { name, description, instructions, model?, tools?, output?, maxToolCalls? }',
    );
  }
  const { name, description, instructions, model, tools, output, maxToolCalls } = options;
  if (typeof description !== 'string') throw invalidConfig(`agentTool '${String(name)}' needs a description`);
  if (typeof instructions !== 'string' || instructions.trim() === '') {
    throw invalidConfig(`agentTool '${String(name)}' needs instructions (the sub-agent's system prompt)`);
  }
  if (model !== undefined && (typeof model !== 'string' || model === '')) {
    throw invalidConfig(`agentTool '${String(name)}': model must be a model id or left out`);
  }
  if (tools !== undefined && (!Array.isArray(tools) || tools.some((tool) => typeof tool !== 'string'))) {
    throw invalidConfig(`agentTool '${String(name)}': tools must be an array of tool names or left out`);
  }
  if (
    maxToolCalls !== undefined &&
    (typeof maxToolCalls !== 'number' || !Number.isInteger(maxToolCalls) || maxToolCalls < 1)
  ) {
    throw invalidConfig(`agentTool '${String(name)}': maxToolCalls must be a positive integer or left out`);
  }
  // A bad schema fails here, where the tool is made, not in the middle of some later turn.
  const plan =
    output === undefined
      ? undefined
      : compileOutput(output, { label: `agentTool '${String(name)}': output`, code: 'INVALID_CONFIG' });
  const frozen: AgentToolSpec = { name, description, instructions };
  if (model !== undefined) frozen.model = model;
  if (tools !== undefined) frozen.tools = [...tools];
  if (maxToolCalls !== undefined) frozen.maxToolCalls = maxToolCalls;
  if (plan !== undefined) {
    const { name: formatName, description: formatDescription, schema } = plan.format;
    frozen.output =
      formatDescription === undefined
        ? { schema, name: formatName }
        : { schema, name: formatName, description: formatDescription };
    frozen.plan = plan;
  }
  const unbound: UnboundAgentTool = {
    name,
    description,
    parametersSchema: PARAMETERS,
    isMutating: true,
    [AGENT_TOOL]: Object.freeze(frozen),
    async execute() {
      return {
        content: `the sub-agent tool '${name}' was not registered with an AgentBuilder`,
        isError: true,
      };
    },
  };
  return unbound;
}

function optionsOf(tool: ToolHandler): Readonly<AgentToolSpec> | undefined {
  return (tool as Partial<UnboundAgentTool>)[AGENT_TOOL];
}

/**
 * Replaces the `agentTool` handlers among the registered tools by ones bound to the agent (`runtime` is
 * read on the first call, once the agent is built) and to the turn loop they run their turns with. A sub-agent is read-only when every tool it may call
 * is, sub-agents included, so several run side by side. Throws INVALID_CONFIG for unknown tools or models.
 */
export function bindAgentTools(options: {
  tools: readonly ToolHandler[];
  models: ReadonlySet<string>;
  runtime: () => AgentRuntime;
  runTurn: RunTurn;
}): ToolHandler[] {
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  for (const tool of options.tools) {
    const spec = optionsOf(tool);
    if (spec === undefined) continue;
    if (spec.model !== undefined && !options.models.has(spec.model)) {
      throw invalidConfig(
        `agentTool '${spec.name}': model '${spec.model}' is not offered by any registered provider`,
      );
    }
    for (const child of spec.tools ?? []) {
      if (!byName.has(child))
        throw invalidConfig(`agentTool '${spec.name}': the tool '${child}' is not registered`);
    }
  }
  const mutating = (name: string, visiting: Set<string>): boolean => {
    const tool = byName.get(name);
    if (tool === undefined) return false;
    const spec = optionsOf(tool);
    if (spec === undefined) return tool.isMutating;
    // A sub-agent that (indirectly) calls itself adds nothing mutating by doing so.
    if (visiting.has(name)) return false;
    visiting.add(name);
    const result = (spec.tools ?? []).some((child) => mutating(child, visiting));
    visiting.delete(name);
    return result;
  };
  return options.tools.map((tool) => {
    const spec = optionsOf(tool);
    if (spec === undefined) return tool;
    let child: ChildRuntime | undefined;
    return {
      name: spec.name,
      description: spec.description,
      parametersSchema: PARAMETERS,
      isMutating: mutating(spec.name, new Set()),
      execute(input: ToolInput): Promise<ToolOutput> {
        const runtime = options.runtime();
        child ??= childRuntime(runtime, spec);
        return runSubagent({ runtime, child, spec, input, runTurn: options.runTurn });
      },
    } satisfies ToolHandler;
  });
}

/** The parent's runtime as a sub-agent sees it: its instructions, its tools, no memory. */
interface ChildRuntime {
  runtime: AgentRuntime;
  model: RoutedModel | undefined;
}

function childRuntime(runtime: AgentRuntime, spec: Readonly<AgentToolSpec>): ChildRuntime {
  const config: ResolvedConfig = {
    ...runtime.config,
    systemInstructions: Object.freeze([spec.instructions]),
    personality: undefined,
    maxToolCallsPerTurn: spec.maxToolCalls ?? runtime.config.maxToolCallsPerTurn,
    memoryCheckpointInterval: 0,
  };
  const tools = runtime.tools.subset(spec.tools ?? []);
  return {
    runtime: {
      ...runtime,
      config,
      tools,
      toolsChars: JSON.stringify(tools.specs).length,
      skills: new SkillManager([]),
      memory: undefined,
    },
    model: spec.model === undefined ? undefined : runtime.models.resolve(spec.model),
  };
}

/** Runs one sub-agent call to its end; never rejects (a failure is an `isError` output). */
async function runSubagent(options: {
  runtime: AgentRuntime;
  child: ChildRuntime;
  spec: Readonly<AgentToolSpec>;
  input: ToolInput;
  runTurn: RunTurn;
}): Promise<ToolOutput> {
  const { runtime, child, spec, input, runTurn } = options;
  const parent = runtime.turns.get(input.turnId);
  if (parent === undefined) {
    return { content: `the sub-agent '${spec.name}' can only be called from a running turn`, isError: true };
  }
  const limit = runtime.config.maxSubagentDepth;
  if (parent.depth + 1 > limit) {
    return {
      content: `Sub-agent not run: sub-agents may nest ${limit} deep (maxSubagentDepth), and this call would be deeper. Do the task yourself.`,
      isError: true,
    };
  }
  const task = (input.arguments as { task: string }).task;
  // The child's calls are summed here (its own sub-agents' folded in when its turn ends, before its terminal
  // event) and priced like any turn's; its `usage` events reach the caller's stream wrapped.
  const usage = emptyUsageTotals();
  const baseModel = child.model ?? parent.model;
  const model: RoutedModel = baseModel;
  const sessionId = randomUUID();
  const turnId = randomUUID();
  const state = new SessionState({
    runtime,
    sessionId,
    model,
    systemPromptOverride: undefined,
    claim: undefined,
  });
  const link: SubagentParent = { sessionId: parent.sessionId, callId: input.callId };
  const sessionConfig: SessionConfig = { modelId: model.info.id };
  // The links are saved before the child's first message: a crash leaves them findable both ways. A storage
  // failure here is not this call's to report: the log keeps the refused events and the turns' own writes
  // report it as STORAGE_ERROR.
  await Promise.all([
    parent.log.append({
      type: 'metadata',
      key: MetadataKey.subagent,
      value: { callId: input.callId, toolName: spec.name, sessionId } satisfies SubagentLink,
    }),
    state.log.append({ type: 'metadata', key: MetadataKey.sessionConfig, value: sessionConfig }),
    state.log.append({ type: 'metadata', key: MetadataKey.parent, value: link }),
  ]).catch(() => undefined);
  const errors: string[] = [];
  let outputInvalid: OutputInvalidError | undefined;
  const emit = (payload: AgentEventPayload): void => {
    if (payload.type === 'error') {
      if (isOutputInvalidError(payload.error)) outputInvalid = payload.error;
      else errors.push(payload.error.message);
    }
    const terminal = payload.type === 'turn_complete' || payload.type === 'turn_cancelled';
    if (terminal) addTotals(parent.subagentUsage, usage);
    parent.emit(
      terminal
        ? {
            type: 'subagent',
            callId: input.callId,
            sessionId,
            turnId,
            event: payload,
            usage: copyUsageTotals(usage),
          }
        : { type: 'subagent', callId: input.callId, sessionId, turnId, event: payload },
    );
  };
  runtime.turns.open(turnId, {
    sessionId,
    budgetGate: parent.budgetGate,
    depth: parent.depth + 1,
    emit,
    log: state.log,
    model: baseModel,
  });
  let ended: TurnResult;
  try {
    ended = await runTurn({
      runtime: child.runtime,
      session: state,
      input: { content: [{ type: 'text', text: task }] },
      turnId,
      signal: input.signal,
      emit,
      usageTotals: usage,
      budgetGate: parent.budgetGate,
      ...(spec.plan === undefined ? {} : { output: spec.plan }),
    });
  } finally {
    runtime.turns.close(turnId);
    await state.log.flush().catch(() => undefined);
  }
  const { status } = ended;
  if (status === 'cancelled') {
    return { content: 'The sub-agent was cancelled before it finished.', isError: true };
  }
  if (outputInvalid !== undefined) {
    return {
      content: [
        `The sub-agent's final answer is not valid against its output schema, even after one repair round: ${outputInvalid.validationErrors.join('; ')}`,
        'Its last answer was:',
        outputInvalid.rawText,
      ].join('\n'),
      isError: true,
    };
  }
  // Structured output: a valid answer is the result whatever else the child reported (that reached the
  // caller's stream already); a turn that ended without one (its tool-call limit reached) has none to give.
  if (spec.plan !== undefined && status === 'completed') {
    if ('output' in ended) return { content: JSON.stringify(ended.output), isError: false };
    const reasons = errors.length > 0 ? ` (${errors.join('; ')})` : '';
    const answer = finalText(state);
    return {
      content: `The sub-agent ended without a structured answer${reasons}${answer === '' ? '.' : `; its last text was:\n${answer}`}`,
      isError: true,
    };
  }
  if (status === 'failed' || errors.length > 0) {
    const answer = finalText(state);
    const reasons = errors.length > 0 ? errors.join('; ') : 'the sub-agent failed';
    return {
      content:
        answer === ''
          ? `The sub-agent failed: ${reasons}`
          : `${answer}\n\n(The sub-agent reported: ${reasons})`,
      isError: status === 'failed',
    };
  }
  return { content: finalText(state), isError: false };
}

function finalText(state: SessionState): string {
  const messages = state.context.messages;
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.type !== 'assistant') continue;
    return message.content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('');
  }
  return '';
}
