import type { ApprovalDecision, Approver, HookPayload, HookResult, Plugin, ToolHandler } from '@youyou/agent';
import { type ApprovalRule, type ApprovalRules, judgeByRules, NO_RULES, type RulesVerdict } from './rules.js';

/** The user's answer to "may this tool run?": this once, always (by a rule kept for the run), or no (maybe why). */
export type ApprovalAnswer =
  | { type: 'once' }
  | { type: 'always'; rule: ApprovalRule }
  | { type: 'deny'; reason?: string };

/** One mutating tool call waiting for the user's approval. */
export interface ApprovalRequest {
  callId: string;
  toolName: string;
  arguments: unknown;
}

/** How the gate decides calls no rule decides: allow every call, deny every call, or ask. */
export type ApprovalPolicy =
  | { type: 'allow_all' }
  /** Non-interactive without --yes: the model is told why and how the user can allow it. */
  | { type: 'deny_all' }
  | { type: 'ask'; ask: (request: ApprovalRequest, signal: AbortSignal) => Promise<ApprovalAnswer> };

/** The names of the tools that change something, from the handlers that will be registered. */
export function mutatingToolNames(tools: readonly ToolHandler[]): Set<string> {
  return new Set(tools.filter((tool) => tool.isMutating).map((tool) => tool.name));
}

/** The abort reason of a call the user saw and refused, with the reason they typed. */
export function userDenial(toolName: string, reason: string | undefined): string {
  const why = reason?.trim() ?? '';
  return why === ''
    ? `the user denied running ${toolName}`
    : `the user denied running ${toolName} and said why: ${why}`;
}

/** The abort reason of a question nobody answered in time: not a refusal, the user may simply be away. */
export function unansweredQuestion(toolName: string, seconds: number): string {
  return `the user was asked whether ${toolName} may run and did not answer within ${seconds} s, so it did not run (no decision was made; it was not refused)`;
}

/** The abort reason of a call stopped by a deny rule of the config file. */
export function ruleDenial(toolName: string, rule: ApprovalRule): string {
  return `a deny rule of the user's configuration (${rule.text}) refuses this ${toolName} call`;
}

/** The abort reason of a call denied because nobody can be asked. */
export function nonInteractiveDenial(toolName: string): string {
  return `the user did not approve running ${toolName}; in non-interactive mode pass --yes`;
}

/** The abort reason of a call a deny rule refuses because youyou cannot tell what the command runs. */
export function uncertainDenial(toolName: string, rule: ApprovalRule, why: string): string {
  return `the user's configuration has deny rules (${rule.text}), and youyou cannot tell for certain which programs this ${toolName} call runs (${why}), so it is refused: write the command plainly, without that`;
}

/**
 * The path a call will really act on, symlinks resolved, relative to the workspace (undefined for calls without
 * a path), for the session the call runs in: rules are matched on it as well as on the path the call names.
 */
export type TouchedPath = (
  request: { toolName: string; arguments: unknown },
  sessionId: string,
) => Promise<string | undefined>;

/** What the rules say of a call, judged on the path it names and the path it will really touch. */
async function judgeCall(options: {
  rules: ApprovalRules;
  toolName: string;
  args: unknown;
  sessionId: string;
  touchedPath: TouchedPath | undefined;
}): Promise<RulesVerdict | undefined> {
  const { rules, toolName, args } = options;
  let touched: string | undefined;
  try {
    touched = await options.touchedPath?.({ toolName, arguments: args }, options.sessionId);
  } catch {
    // A path that cannot be resolved is never let through by an allow rule: the user is asked.
    const verdict = judgeByRules(rules, toolName, args);
    return verdict?.verdict === 'allow' ? undefined : verdict;
  }
  return judgeByRules(rules, toolName, args, touched);
}

/** Why a verdict refuses a call, or undefined when it does not. */
function refusalOf(toolName: string, judged: RulesVerdict | undefined): string | undefined {
  if (judged?.verdict !== 'deny') return undefined;
  return judged.uncertain === undefined
    ? ruleDenial(toolName, judged.rule)
    : uncertainDenial(toolName, judged.rule, judged.uncertain);
}

/**
 * The CLI's approvals, through the runtime's own: `needsApproval` says which calls go to the approver (those a
 * deny rule refuses, and mutating calls no allow rule or --yes lets through), and `approve` decides them: a
 * deny rule refuses, an allow rule (or one the user chose with "always" meanwhile) approves, otherwise the
 * policy asks. A refused call never runs; its tool_call_end says `denied: true`, and the model is told it was
 * denied and why. The question gives up at `answerWithinMs`, a little before the runtime's window, so the
 * model is told nobody answered.
 */
export interface ApprovalGate {
  /** Whether this call must be put to `approve`. */
  needsApproval(toolName: string, args: unknown): Promise<boolean>;
  /** The approver of every turn (`sendMessage(text, { approve })`). */
  approve: Approver;
}

/** Makes the gate; `rules` are those of the config file, and the user's "always" answers add to them. */
export function createApprovalGate(options: {
  mutating: ReadonlySet<string>;
  policy: ApprovalPolicy;
  answerWithinMs: number;
  rules?: ApprovalRules;
  /** The path each call will really touch (the CLI's modes have one workspace: the session is not needed). */
  touchedPath?: TouchedPath;
}): ApprovalGate {
  const { mutating, policy } = options;
  const rules = options.rules ?? NO_RULES;
  /** The rules the user chose with "always" during this run. */
  const sessionAllow: ApprovalRule[] = [];
  const current = (): ApprovalRules => ({ allow: [...rules.allow, ...sessionAllow], deny: rules.deny });
  const judge = (toolName: string, args: unknown, sessionId: string, withAlways: boolean) =>
    judgeCall({
      rules: withAlways ? current() : rules,
      toolName,
      args,
      sessionId,
      touchedPath: options.touchedPath,
    });
  const runsUnasked = async (toolName: string, args: unknown, sessionId: string): Promise<boolean> =>
    !mutating.has(toolName) ||
    policy.type === 'allow_all' ||
    (await judge(toolName, args, sessionId, true))?.verdict === 'allow';
  const ask = async (request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> => {
    if (policy.type !== 'ask') return { type: 'deny', reason: nonInteractiveDenial(request.toolName) };
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        // Decided before the question hears of the abort: whatever it answers now, nobody answered.
        timedOut = true;
        resolve('timeout');
        controller.abort();
      }, options.answerWithinMs);
    });
    try {
      const answer = await Promise.race([policy.ask(request, controller.signal), timeout]);
      if (timedOut || answer === 'timeout') {
        const seconds = Math.round(options.answerWithinMs / 1000);
        return { type: 'deny', reason: unansweredQuestion(request.toolName, seconds) };
      }
      if (answer.type === 'deny')
        return { type: 'deny', reason: userDenial(request.toolName, answer.reason) };
      if (answer.type === 'always') sessionAllow.push(answer.rule);
      return { type: 'approve' };
    } catch {
      // A question that failed (the terminal went away) must never let the tool run.
      return { type: 'deny', reason: `${request.toolName} was not approved` };
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  };
  return {
    needsApproval: async (toolName, args) =>
      refusalOf(toolName, await judge(toolName, args, '', false)) !== undefined ||
      !(await runsUnasked(toolName, args, '')),
    approve: async (request, signal) => {
      const { toolName, arguments: args, sessionId } = request;
      const refusal = refusalOf(toolName, await judge(toolName, args, sessionId, false));
      if (refusal !== undefined) return { type: 'deny', reason: refusal };
      // An "always" answered for an earlier call of the batch may cover this one by now.
      if (await runsUnasked(toolName, args, sessionId)) return { type: 'approve' };
      return ask(
        { callId: request.callId, toolName: request.toolName, arguments: request.arguments },
        signal,
      );
    },
  };
}

function readRequest(data: unknown): ApprovalRequest | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as { callId?: unknown; toolName?: unknown; arguments?: unknown };
  if (typeof record.toolName !== 'string') return undefined;
  return {
    callId: typeof record.callId === 'string' ? record.callId : '',
    toolName: record.toolName,
    arguments: record.arguments,
  };
}

/**
 * A backstop for approvals the runtime holds for a client (`youyou serve`): a BeforeToolUse handler that
 * refuses every call a deny rule matches, even one a client approved. In the CLI's own modes the gate has
 * refused such calls already, so they never reach it.
 */
export function createDenyRulesPlugin(rules: ApprovalRules, touchedPath?: TouchedPath): Plugin {
  const decide = async (payload: HookPayload): Promise<HookResult> => {
    const request = readRequest(payload.data);
    if (request === undefined) return { type: 'continue' };
    const judged = await judgeCall({
      rules,
      toolName: request.toolName,
      args: request.arguments,
      sessionId: payload.sessionId,
      touchedPath,
    });
    const refusal = refusalOf(request.toolName, judged);
    return refusal === undefined ? { type: 'continue' } : { type: 'abort', reason: refusal };
  };
  return {
    id: 'youyou-deny-rules',
    displayName: 'Deny rules',
    description: 'Refuses tool calls that a deny rule of the configuration matches.',
    initialize: async () => {},
    apply: (context) => {
      context.tap('BeforeToolUse', decide, { onTimeout: 'abort' });
    },
    shutdown: async () => {},
  };
}
