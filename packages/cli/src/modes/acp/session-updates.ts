import type {
  ContentBlock as AcpContentBlock,
  SessionUpdate,
  ToolCallContent,
  ToolCallLocation,
  ToolKind,
} from '@agentclientprotocol/sdk';
import type { AgentEventPayload, ContentBlock, Message } from '@youyou/agent';
import type { Workspace } from '../../tools/workspace.js';
import { LiveToolOutput } from './live-output.js';
import { readWorkspaceText } from './prompt-content.js';
import { toolDiffOf, toolKindOf, toolLocationsOf, toolOutputContent, toolTitleOf } from './tool-calls.js';

/** The largest file whose old text a write_file diff shows. */
const MAX_DIFF_FILE_BYTES = 1024 * 1024;

/** A call a permission request showed the editor: still asked (or allowed), or refused (it will not run). */
export type AnnouncedCall = 'asked' | 'refused';

/** A call as an editor is shown it. */
export interface CallDescription {
  toolCallId: string;
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  content: ToolCallContent[];
  rawInput: unknown;
}

/** What an editor is told of a call before it runs: its title, kind, files and (for edits) its diff. */
export async function describeCall(options: {
  workspace: Workspace;
  callId: string;
  toolName: string;
  args: unknown;
  /** Read the file a write_file replaces, for the diff's old text (not for a call of the past). */
  readOldText: boolean;
}): Promise<CallDescription> {
  const { workspace, toolName, args } = options;
  let oldFileText: string | undefined;
  if (
    options.readOldText &&
    toolName === 'write_file' &&
    typeof (args as { path?: unknown } | null)?.path === 'string'
  ) {
    const read = await readWorkspaceText(workspace, (args as { path: string }).path, MAX_DIFF_FILE_BYTES);
    if (read.ok) oldFileText = read.text;
  }
  const diff = toolDiffOf({ workspaceRoot: workspace.root, toolName, args, oldFileText });
  return {
    toolCallId: options.callId,
    title: toolTitleOf(toolName, args),
    kind: toolKindOf(toolName),
    locations: toolLocationsOf(workspace.root, args),
    content: diff === undefined ? [] : [diff],
    rawInput: args,
  };
}

function acpBlockOf(block: ContentBlock): AcpContentBlock | undefined {
  if (block.type === 'text') return { type: 'text', text: block.text };
  if (block.type === 'image') return { type: 'image', data: block.data, mimeType: block.mediaType };
  return undefined;
}

/**
 * The `session/update`s of one turn, event by event: message and thought chunks, and each tool call as
 * `tool_call` (with its diff when it edits; sent pending with the permission request when one is asked) and
 * `tool_call_update`s as it runs and ends with its result.
 */
export class TurnUpdates {
  readonly #workspace: Workspace;
  /** The diff of each edit call, shown again with its result when it succeeded. */
  readonly #diffs: Map<string, ToolCallContent[]>;
  /** Calls already shown to the editor by their permission request. */
  readonly #announced: Map<string, AnnouncedCall>;
  readonly #live: LiveToolOutput;

  /**
   * `announced`/`diffs`: the calls (and their diffs) the permission requests have shown already; `later`
   * queues an update made when its turn to be sent comes (a running call's output held back by the throttle),
   * none when it has become moot.
   */
  constructor(options: {
    workspace: Workspace;
    announced: Map<string, AnnouncedCall>;
    diffs: Map<string, ToolCallContent[]>;
    later: (update: () => SessionUpdate | undefined) => void;
  }) {
    this.#workspace = options.workspace;
    this.#announced = options.announced;
    this.#diffs = options.diffs;
    this.#live = new LiveToolOutput({
      send: (callId) => options.later(() => this.#live.updateOf(callId)),
      contentBefore: (callId) => this.#diffs.get(callId) ?? [],
    });
  }

  /** The turn ended: output still held back is not sent. */
  dispose(): void {
    this.#live.dispose();
  }

  /** The updates one event gives (none for most of the bookkeeping events). */
  async of(payload: AgentEventPayload): Promise<SessionUpdate[]> {
    switch (payload.type) {
      case 'text_delta':
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: payload.text } }];
      case 'reasoning_delta':
        return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: payload.text } }];
      case 'tool_call_start': {
        // A call put to the editor was shown (pending) when its permission was asked: now it runs.
        const announced = this.#announced.get(payload.callId);
        if (announced === 'refused') return [];
        if (announced === 'asked') {
          return [{ sessionUpdate: 'tool_call_update', toolCallId: payload.callId, status: 'in_progress' }];
        }
        const call = await describeCall({
          workspace: this.#workspace,
          callId: payload.callId,
          toolName: payload.toolName,
          args: payload.arguments,
          readOldText: true,
        });
        if (call.content.length > 0) this.#diffs.set(payload.callId, call.content);
        return [{ sessionUpdate: 'tool_call', ...call, status: 'in_progress' }];
      }
      case 'tool_output_delta': {
        // A refused call never runs; one the editor was not told of has no line to show it under.
        if (this.#announced.get(payload.callId) === 'refused') return [];
        const update = this.#live.add(payload.callId, payload.text);
        return update === undefined ? [] : [update];
      }
      case 'tool_call_end': {
        this.#live.end(payload.callId);
        const diff = payload.success ? (this.#diffs.get(payload.callId) ?? []) : [];
        this.#diffs.delete(payload.callId);
        this.#announced.delete(payload.callId);
        return [
          {
            sessionUpdate: 'tool_call_update',
            toolCallId: payload.callId,
            status: payload.success ? 'completed' : 'failed',
            content: [...diff, ...toolOutputContent(payload.output)],
            rawOutput: payload.output,
          },
        ];
      }
      default:
        return [];
    }
  }
}

/** The updates that replay a loaded session's history (the context the model sees next), oldest first. */
export async function historyUpdates(workspace: Workspace, messages: Message[]): Promise<SessionUpdate[]> {
  const updates: SessionUpdate[] = [];
  for (const message of messages) {
    if (message.type === 'user' || message.type === 'assistant') {
      for (const block of message.content) {
        const content = acpBlockOf(block);
        if (message.type === 'user' && content !== undefined) {
          updates.push({ sessionUpdate: 'user_message_chunk', content });
        } else if (block.type === 'reasoning') {
          updates.push({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: block.text } });
        } else if (content !== undefined) {
          updates.push({ sessionUpdate: 'agent_message_chunk', content });
        }
      }
    } else if (message.type === 'tool_call') {
      // The old text of a rewritten file is gone: the replayed diff shows only what was written.
      const call = await describeCall({
        workspace,
        callId: message.callId,
        toolName: message.toolName,
        args: message.arguments,
        readOldText: false,
      });
      updates.push({ sessionUpdate: 'tool_call', ...call, status: 'in_progress' });
    } else if (message.type === 'tool_result') {
      const output = { content: message.content, isError: message.isError };
      updates.push({
        sessionUpdate: 'tool_call_update',
        toolCallId: message.callId,
        status: message.isError ? 'failed' : 'completed',
        content: toolOutputContent(output),
        rawOutput: output,
      });
    }
  }
  return updates;
}
