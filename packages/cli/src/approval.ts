import type { HookPayload, HookResult, Plugin, ToolHandler } from '@youyou/agent';

/** The user's answer to "may this tool run?". */
export type ApprovalAnswer = 'once' | 'always' | 'deny';

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
 * A plugin whose BeforeToolUse handler lets read-only tools through and asks before every mutating one. The
 * runtime counts a hook that does not answer within `toolTimeoutMs` as `continue` — the tool would run — so
 * the question gives up and denies a little before that bound (`answerWithinMs`).
 */
export function createApprovalPlugin(options: {
  mutating: ReadonlySet<string>;
  policy: ApprovalPolicy;
  answerWithinMs: number;
}): Plugin {
  const { mutating, policy } = options;
  const alwaysAllowed = new Set<string>();
  const decide = async (payload: HookPayload): Promise<HookResult> => {
    const request = readRequest(payload.data);
    if (request === undefined || !mutating.has(request.toolName)) return { type: 'continue' };
    if (policy.type === 'allow_all' || alwaysAllowed.has(request.toolName)) return { type: 'continue' };
    if (policy.type === 'deny_all') return { type: 'abort', reason: nonInteractiveDenial(request.toolName) };
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve('timeout');
      }, options.answerWithinMs);
    });
    try {
      const answer = await Promise.race([policy.ask(request, controller.signal), timedOut]);
      if (answer === 'timeout') {
        return {
          type: 'abort',
          reason: `the user did not answer whether ${request.toolName} may run, so it did not run`,
        };
      }
      if (answer === 'deny') return { type: 'abort', reason: `the user denied running ${request.toolName}` };
      if (answer === 'always') alwaysAllowed.add(request.toolName);
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
      context.tap('BeforeToolUse', decide);
    },
    shutdown: async () => {},
  };
}
