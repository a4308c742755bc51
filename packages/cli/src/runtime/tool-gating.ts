import type { Approver, ToolHandler, TurnRunOptions } from '@youyou/agent';
import {
  type ApprovalPolicy,
  createApprovalGate,
  mutatingToolNames,
  type TouchedPath,
} from '../approval/policy.js';
import type { ApprovalRules } from '../approval/rules.js';
import type { CheckpointStore } from './checkpoints.js';

/** Set while a turn may only look (`withReadOnlyTools`): why its mutating calls are refused. */
export interface ReadOnlyTurn {
  reason: string | undefined;
}

/** The tools as the agent offers them, and how to prepare a later tool set the same way. */
export interface GatedTools {
  tools: ToolHandler[];
  /** The options every turn runs with: the in-process approver, unless approvals are held for a client. */
  turnOptions: TurnRunOptions;
  /** Prepares a whole new tool set (an MCP server's changed list) as `tools` were; its mutating tools join the gate's. */
  regate: (tools: readonly ToolHandler[]) => ToolHandler[];
}

/**
 * Puts each tool behind the approval gate (or, with `mutatingNeedApproval`, marks the mutating ones for a
 * client's approval) and, with a checkpoint store, records the workspace around each approved mutating call.
 */
export function gateTools(options: {
  tools: readonly ToolHandler[];
  policy: ApprovalPolicy;
  rules: ApprovalRules;
  touchedPath: TouchedPath;
  /** Set by `youyou serve` (see RuntimeOptions.mutatingNeedApproval); unset, turns get the in-process approver. */
  mutatingNeedApproval: boolean | undefined;
  readOnly: ReadOnlyTurn;
  checkpoints: CheckpointStore | undefined;
  toolTimeoutMs: number;
  warn: (text: string) => void;
}): GatedTools {
  const { readOnly, checkpoints, toolTimeoutMs, warn } = options;
  const held = options.mutatingNeedApproval !== undefined;
  // The gate reads this set on every call, so tools a server adds later are asked about too.
  const mutating = mutatingToolNames(options.tools);
  const gate = createApprovalGate({
    mutating,
    policy: options.policy,
    rules: options.rules,
    touchedPath: options.touchedPath,
    // Leave the runtime's window a margin, so the model is told nobody answered, in the gate's words.
    answerWithinMs: Math.max(500, toolTimeoutMs - Math.min(5000, toolTimeoutMs / 10)),
  });
  const approvalOf = (tool: ToolHandler): ToolHandler => {
    if (held)
      return options.mutatingNeedApproval === true && tool.isMutating
        ? { ...tool, needsApproval: true }
        : tool;
    return {
      ...tool,
      needsApproval: async (args: unknown) =>
        (readOnly.reason !== undefined && mutating.has(tool.name)) || gate.needsApproval(tool.name, args),
    };
  };
  // Each mutating call is checkpointed once approved: the store records the workspace before and after it.
  const gated = (tool: ToolHandler): ToolHandler => {
    const approved = approvalOf(tool);
    return checkpoints === undefined ? approved : checkpoints.wrap(approved, warn);
  };
  const approve: Approver = (request, signal) =>
    readOnly.reason !== undefined && mutating.has(request.toolName)
      ? { type: 'deny', reason: readOnly.reason }
      : gate.approve(request, signal);
  return {
    tools: options.tools.map(gated),
    turnOptions: held ? {} : { approve, approvalTimeoutMs: toolTimeoutMs },
    regate: (tools) => {
      for (const name of mutatingToolNames(tools)) mutating.add(name);
      return tools.map(gated);
    },
  };
}
