/**
 * The keys of the session log's metadata events, in one place: what the runtime records besides messages, and
 * reads back when a session resumes. A key is part of the log's format, so each is written here once.
 */
export const MetadataKey = {
  /** The session's model and prompt choices (`SessionConfig`), first in every log. */
  sessionConfig: 'session_config',
  /** A compaction's summary and how many messages it kept. */
  compaction: 'compaction',
  /** The tool results pruning replaced with a notice, by call id. */
  contextPruned: 'context_pruned',
  /** One model call's usage and cost. */
  usage: 'usage',
  /** What a turn's sub-agents used, in sum. */
  subagentUsage: 'subagent_usage',
  /** In a caller's log: a child session a sub-agent call opened. */
  subagent: 'subagent',
  /** In a child's log: the caller that opened it. */
  parent: 'parent',
  /** A batch held for approval: the turn suspended before it ran. */
  approvalPending: 'approval_pending',
  /** A decision on one call of the held batch. */
  approvalDecision: 'approval_decision',
  /** The held batch was continued: the turn goes on. */
  approvalContinued: 'approval_continued',
  /** A turn ended without its final answer being the last message (failed, cancelled, at its tool limit). */
  turnEnded: 'turn_ended',
  /** An interrupted turn (cut by a crash) was continued: what it left unfinished is reconciled. */
  turnContinued: 'turn_continued',
  /** A rewind: the turn named and every later one left the context (`{ toTurnId }`). */
  rewind: 'rewind',
  /** In a source's log: a session forked from it (`{ sessionId, atTurnId? }`). */
  fork: 'fork',
  /** In a fork's log: the session it was forked from (`{ sessionId, atTurnId? }`). */
  forkedFrom: 'forked_from',
} as const;
