import { DEFAULT_BASE_URL } from './config.js';

/** No model server answers at the configured address; its message is the one sentence the user sees. */
export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}

/** The sentence shown when the model server cannot be reached, with the fix. */
export function unreachableMessage(baseURL: string): string {
  const fix =
    baseURL === DEFAULT_BASE_URL ? 'start Ollama (ollama serve)' : 'start it or correct --base-url,';
  return `cannot reach the model server at ${baseURL} — ${fix} or pass --provider openai with OPENAI_API_KEY set.`;
}

/** True when a provider error says the server could not be reached at all (nothing was answered). */
export function isUnreachableError(error: { code: string; message: string }): boolean {
  return (
    error.code === 'PROVIDER_ERROR' &&
    /could not reach|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|Connection error/i.test(error.message)
  );
}
