/**
 * Where a model call reports what it used: the types every step that calls a model shares (the turn, compaction,
 * memory), so that each reports its calls without knowing how usage is priced, logged or summed (usage/ does that).
 */
import type { TokenUsage } from '../kernel/types.js';
import type { ChatPurpose } from '../ports/model.js';

/** One model call's usage as the runtime reports it: the payload of a `usage` event without its type. */
export interface UsageReport {
  purpose: ChatPurpose;
  providerId: string;
  modelId: string;
  usage: TokenUsage;
  costUsd?: number;
}

/**
 * Takes the usage of one finished model call (before its price is known). The sink keeps `call.usage` (in the
 * `usage` event and the log record): the caller hands over an object of its own, as the provider-event check
 * makes one for every `usage` event, and does not change it afterwards.
 */
export type UsageSink = (call: Omit<UsageReport, 'costUsd'>) => void;
