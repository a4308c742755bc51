import { isAgentError } from '@youyou/agent';

// Errors whose message is written from outside text (a provider's answer, a storage or plugin failure) are
// shown to a client as their code and a fixed sentence only: such text may hold a key or an internal address.
const OPAQUE: Record<string, string> = {
  PROVIDER_ERROR: 'the model provider failed; try again',
  STORAGE_ERROR: 'the session storage failed; try again later',
  PLUGIN_ERROR: 'a plugin failed',
  MEMORY_ERROR: 'the memory store failed',
  COMPACT_ERROR: 'compacting the conversation failed',
  INTERNAL_ERROR: 'an unexpected error',
};

const MESSAGE_PREFIX = /^\[[A-Z_]+\]\s*/;

/** What a client may see of an error: its code, a message without outside text, whether to retry. */
export function publicError(error: unknown): { code: string; message: string; retryable: boolean } {
  if (!isAgentError(error))
    return { code: 'INTERNAL_ERROR', message: 'an unexpected error', retryable: false };
  const fixed = OPAQUE[error.code];
  // An AgentError's own message starts with "[CODE] "; the code travels in its own field.
  const message = fixed ?? error.message.replace(MESSAGE_PREFIX, '');
  return { code: error.code, message, retryable: error.retryable };
}
