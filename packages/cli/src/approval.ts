import type { HookPayload, HookResult, Plugin, ToolHandler } from '@youyou/agent';
import { type ApprovalRule, type ApprovalRules, judgeByRules, NO_RULES } from './rules.js';

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

/** How the plugin decides: allow every call, deny every call, or ask. */
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
 * A plugin whose BeforeToolUse handler refuses calls a deny rule matches, lets read-only tools and calls an
 * allow rule matches through, and asks before every other mutating one. The handler is tapped with
 * `onTimeout: 'abort'`, so a question still open at the hook's bound (`toolTimeoutMs`) refuses the call; the
 * question itself gives up a little before that bound (`answerWithinMs`) so the model is told nobody answered.
 */
export function createApprovalPlugin(options: {
  mutating: ReadonlySet<string>;
  policy: ApprovalPolicy;
  answerWithinMs: number;
  rules?: ApprovalRules;
  /**
   * The path a call will really act on, symlinks resolved, relative to the workspace (undefined for calls
   * without a path): rules are matched on it as well as on the path the call names.
   */
  touchedPath?: (request: ApprovalRequest, sessionId: string) => Promise<string | undefined>;
}): Plugin {
  const { mutating, policy } = options;
  const rules = options.rules ?? NO_RULES;
  /** The rules the user chose with "always" during this run. */
  const sessionAllow: ApprovalRule[] = [];
  const decide = async (payload: HookPayload): Promise<HookResult> => {
    const request = readRequest(payload.data);
    if (request === undefined) return { type: 'continue' };
    let touched: string | undefined;
    let unresolved = false;
    try {
      touched = await options.touchedPath?.(request, payload.sessionId);
    } catch {
      unresolved = true;
    }
    const verdict = judgeByRules(
      { allow: [...rules.allow, ...sessionAllow], deny: rules.deny },
      request.toolName,
      request.arguments,
      touched,
    );
    // A path that could not be resolved is never let through by an allow rule: the user is asked.
    const judged = unresolved && verdict?.verdict === 'allow' ? undefined : verdict;
    if (judged?.verdict === 'deny')
      return { type: 'abort', reason: ruleDenial(request.toolName, judged.rule) };
    if (!mutating.has(request.toolName)) return { type: 'continue' };
    if (policy.type === 'allow_all' || judged?.verdict === 'allow') return { type: 'continue' };
    if (policy.type === 'deny_all') return { type: 'abort', reason: nonInteractiveDenial(request.toolName) };
    const controller = new AbortController();
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
        return {
          type: 'abort',
          reason: unansweredQuestion(request.toolName, Math.round(options.answerWithinMs / 1000)),
        };
      }
      if (answer.type === 'deny')
        return { type: 'abort', reason: userDenial(request.toolName, answer.reason) };
      if (answer.type === 'always') sessionAllow.push(answer.rule);
      return { type: 'continue' };
    } catch {
      // A question that failed (the terminal went away) must never let the tool run.
      return { type: 'abort', reason: `${request.toolName} was not approved` };
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    id: 'youyou-approval',
    displayName: 'Tool approval',
    description: 'Asks the user before a tool that changes files or the outside world runs.',
    initialize: async () => {},
    apply: (context) => {
      // A question still open at the hook's bound refuses the call: approval never fails open.
      context.tap('BeforeToolUse', decide, { onTimeout: 'abort' });
    },
    shutdown: async () => {},
  };
}
