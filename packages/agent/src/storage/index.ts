/**
 * @youyou/agent/storage — for authors of a SessionStorage or MemoryStorage: the checks every storage
 * makes the same way (so all of them reject bad input with the same INVALID_INPUT), the session cursor,
 * titles and search words, and the tagged-JSON codec that keeps Dates, undefined, NaN, ±Infinity, -0 and
 * BigInt exact. An embedder never needs this entry; the port types are on `@youyou/agent`.
 */
export { decodeStoredValue, type EncodedValue, encodeStoredValue } from './codec.js';
export {
  checkMemory,
  checkPageLimit,
  checkSessionEvent,
  checkSessionId,
  decodeSessionCursor,
  encodeSessionCursor,
  messageTextOf,
  type SessionCursorPosition,
  searchWordsOf,
  sessionTitleOf,
} from './support.js';
