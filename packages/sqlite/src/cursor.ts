import { invalidInput } from './errors.js';

/** A position in the newest-first order of sessions: "strictly after" it is the next page. */
export interface SessionPosition {
  updatedAtMs: number;
  sessionId: string;
}

/** An opaque cursor: base64url of a small JSON object. */
export function encodeCursor(position: SessionPosition): string {
  return Buffer.from(
    JSON.stringify({ updatedAt: position.updatedAtMs, sessionId: position.sessionId }),
  ).toString('base64url');
}

/** Reads a cursor made by `encodeCursor`; anything else is INVALID_INPUT. */
export function decodeCursor(cursor: string): SessionPosition {
  const malformed = () => invalidInput('malformed cursor: pass back a `nextCursor` from listSessions');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (typeof value !== 'object' || value === null) throw malformed();
  const { updatedAt, sessionId } = value as { updatedAt?: unknown; sessionId?: unknown };
  if (typeof updatedAt !== 'number' || !Number.isSafeInteger(updatedAt) || typeof sessionId !== 'string') {
    throw malformed();
  }
  const position = { updatedAtMs: updatedAt, sessionId };
  // base64url decoding skips characters it does not know, so only an exact re-encoding is ours.
  if (encodeCursor(position) !== cursor) throw malformed();
  return position;
}
