import type { JsonSchema, ToolOutput } from '../kernel/types.js';

/** What a tool receives for one call. */
export interface ToolInput {
  callId: string;
  /** The parsed JSON arguments, already validated against `parametersSchema`. */
  arguments: unknown;
  sessionId: string;
  turnId: string;
  /** Fires when the call times out or the turn is cancelled; stop early when it does. */
  signal: AbortSignal;
  /**
   * Reports output while the call runs (a command's lines as they come): each text becomes a
   * `tool_output_delta` event. Display only — the result is still what `execute` answers. The runtime always
   * gives it; calls after the call ended, and text past the per-call limit, are dropped; it never throws.
   */
  onOutput?: (text: string) => void;
}

/** What a tool returns (a value type, defined with the others in kernel/types.ts). */
export type { ToolOutput };

/**
 * A tool the model can call. Read-only tools (`isMutating: false`) of one batch run concurrently;
 * a batch with any mutating tool runs in series. A thrown error becomes an `isError` result.
 */
export interface ToolHandler {
  readonly name: string;
  readonly description: string;
  /** The JSON Schema of the arguments object. */
  readonly parametersSchema: JsonSchema;
  readonly isMutating: boolean;
  /**
   * Whether a call must be approved before it runs: `true`, or a function of the call's (schema-valid)
   * arguments. Such a call is put to the turn's approver (`sendMessage(input, { approve })`), denied when the
   * approval window passes; with no approver the turn ends suspended (`turn_suspended`) until the session's
   * `approve`/`deny` and `continue()`. A function that throws or does not answer in time means "needs approval".
   */
  readonly needsApproval?: boolean | ((args: unknown) => boolean | Promise<boolean>);
  /**
   * A mutating tool whose second run with the same arguments changes nothing more than the first (it sets
   * rather than adds). When a turn is continued after an interruption, such a call without a result simply
   * runs again; any other mutating call without a result waits for approval, since it may have run already.
   */
  readonly idempotent?: boolean;
  execute(input: ToolInput): Promise<ToolOutput>;
}
