import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ElicitResultSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalAnswer, ApprovalPolicy, ApprovalRequest } from '../../approval/policy.js';

/** How much of a call's arguments the consent question quotes; the rest is cut, marked with an ellipsis. */
const ARGUMENTS_PREVIEW_CHARS = 1_500;

/** The MCP client behind one `run_turn` call: the server to ask through and the request the question belongs to. */
export interface ConsentChannel {
  server: Server;
  /** The id of the tools/call request: over HTTP the question travels on that request's stream. */
  relatedRequestId: RequestId;
}

/**
 * Whether the client can answer a form question (`elicitation/create`). An empty `elicitation` object is the
 * capability as clients declared it before modes existed, and means forms.
 */
export function canElicit(server: Server): boolean {
  const elicitation = server.getClientCapabilities()?.elicitation;
  if (elicitation === undefined) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** The arguments as one JSON line, cut when long (the client shows them; they come from the model). */
function argumentsPreview(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args) ?? 'null';
  } catch {
    text = '(arguments that cannot be shown)';
  }
  return text.length > ARGUMENTS_PREVIEW_CHARS ? `${text.slice(0, ARGUMENTS_PREVIEW_CHARS)}…` : text;
}

/** The question put to the client for one call. */
function questionOf(request: ApprovalRequest): string {
  return `youyou wants to run the tool ${request.toolName} with ${argumentsPreview(request.arguments)}. Accept to let it run once; decline to refuse it.`;
}

/**
 * How a turn decides the mutating calls no rule decides: --yes lets them run; a client that can answer a form
 * is asked through elicitation (accept runs the call once, decline or cancel refuses it); a client that
 * cannot be asked gets them refused, the model told that --yes would allow them. Deny rules are judged
 * before any of this, by the gate.
 */
export function consentPolicy(options: {
  channel: ConsentChannel;
  yes: boolean;
  /** How long the client has to answer; the gate gives up at the same time, this only ends the request. */
  answerWithinMs: number;
}): ApprovalPolicy {
  const { channel } = options;
  if (options.yes) return { type: 'allow_all' };
  if (!canElicit(channel.server)) return { type: 'deny_all' };
  return {
    type: 'ask',
    ask: async (request, signal): Promise<ApprovalAnswer> => {
      const result = await channel.server.request(
        {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: questionOf(request),
            requestedSchema: { type: 'object', properties: {} },
          },
        },
        ElicitResultSchema,
        { signal, relatedRequestId: channel.relatedRequestId, timeout: options.answerWithinMs + 5_000 },
      );
      // Decline and cancel (the question dismissed) both refuse: only a clear yes lets a call change things.
      return result.action === 'accept' ? { type: 'once' } : { type: 'deny' };
    },
  };
}
