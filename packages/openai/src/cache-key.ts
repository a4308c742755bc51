import { createHash } from 'node:crypto';
import { AgentError } from '@youyou/agent';

/** OpenAI refuses a `prompt_cache_key` longer than 64 characters. */
const KEY_HEX_LENGTH = 32;

/**
 * The `prompt_cache_key` of a session's requests: a hash of the session id, so every request of a session
 * (turns, compaction, memory) is routed to the same cache, the key stays well under the API's 64 characters
 * whatever the id is, and a host's own session ids never leave the machine. Undefined without a session.
 */
export function promptCacheKey(sessionId: string | undefined): string | undefined {
  if (sessionId === undefined || sessionId === '') return undefined;
  const digest = createHash('sha256').update(sessionId).digest('hex');
  return `youyou-${digest.slice(0, KEY_HEX_LENGTH)}`;
}

/** The `promptCacheKey` option, checked: a boolean, or the provider's default when left out. */
export function promptCacheKeyOption(options: {
  value: unknown;
  fallback: boolean;
  providerName: string;
}): boolean {
  if (options.value === undefined) return options.fallback;
  if (typeof options.value !== 'boolean') {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `${options.providerName}: 'promptCacheKey' must be true or false`,
    });
  }
  return options.value;
}
