import type { AgentContext, PermissionOption, RequestPermissionResponse } from '@agentclientprotocol/sdk';
import type { ApprovalAnswer, ApprovalRequest } from '../../approval/policy.js';
import { type ApprovalRule, judgeByRules } from '../../approval/rules.js';
import { offeredRules } from '../../chat/approval-prompt.js';
import type { Workspace } from '../../tools/workspace.js';
import { type CallDescription, describeCall } from './session-updates.js';

/** The four answers an editor is offered, by option id. */
const OPTIONS: PermissionOption[] = [
  { optionId: 'allow_once', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
];

/**
 * Puts the calls our approval would ask about to the editor (`session/request_permission`). Its answer is
 * final; "always" keeps, for this process, the narrowest rule the terminal would offer (`shell(git status)`,
 * `write_file`): allow rules go to the approval gate's session rules, reject rules are kept here.
 */
export class EditorPermissions {
  readonly #client: () => AgentContext;
  /**
   * Rules the editor rejected "always", by workspace root (as the gate keeps the allowed ones per workspace):
   * their calls are denied without asking again.
   */
  readonly #rejected = new Map<string, ApprovalRule[]>();

  constructor(client: () => AgentContext) {
    this.#client = client;
  }

  /** Asks the editor about one call of session `sessionId`; a cancelled or failed question is a denial. */
  async ask(options: {
    sessionId: string;
    workspace: Workspace;
    request: ApprovalRequest;
    signal: AbortSignal;
    /** Shows the editor the call (pending) before it is asked about it. */
    announce: (call: CallDescription) => Promise<void>;
  }): Promise<ApprovalAnswer> {
    const { request, signal } = options;
    const offered = offeredRules(request);
    const rule = offered[0] ?? { tool: request.toolName, text: request.toolName };
    const rejected = this.#rejected.get(options.workspace.root) ?? [];
    if (judgeByRules({ allow: [], deny: rejected }, request.toolName, request.arguments) !== undefined) {
      return { type: 'deny', reason: `they chose to always reject ${rule.text} in this workspace` };
    }
    const call = await describeCall({
      workspace: options.workspace,
      callId: request.callId,
      toolName: request.toolName,
      args: request.arguments,
      readOldText: true,
    });
    await options.announce(call);
    let response: RequestPermissionResponse;
    try {
      response = await this.#client().request(
        'session/request_permission',
        { sessionId: options.sessionId, toolCall: { ...call, status: 'pending' }, options: OPTIONS },
        { cancellationSignal: signal },
      );
    } catch {
      return { type: 'deny', reason: 'the editor did not answer the permission request' };
    }
    const outcome = response.outcome;
    if (outcome.outcome !== 'selected') return { type: 'deny', reason: 'the turn was cancelled' };
    switch (outcome.optionId) {
      case 'allow_once':
        return { type: 'once' };
      case 'allow_always':
        return { type: 'always', rule };
      case 'reject_always':
        this.#rejected.set(options.workspace.root, [...rejected, rule]);
        return { type: 'deny' };
      default:
        return { type: 'deny' };
    }
  }
}
