import { onlyKeys, readJsonObject } from '../http/body.js';
import { HttpError } from '../http/errors.js';
import type { ElicitationValue, HeldElicitationAnswer } from '../sessions/held-elicitations.js';
import type { RouteGroup } from './route-deps.js';

const ACTIONS = ['accept', 'decline', 'cancel'] as const;

function invalid(message: string): HttpError {
  return new HttpError({ status: 400, code: 'INVALID_INPUT', message });
}

/** The body of an answer: `{ action: 'accept', content: { name: value } }`, `{ action: 'decline' }` or `'cancel'`. */
function answerOf(body: Record<string, unknown>): HeldElicitationAnswer {
  onlyKeys(body, ['action', 'content']);
  const { action, content } = body;
  if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) {
    throw invalid("'action' must be accept, decline or cancel");
  }
  if (action !== 'accept') {
    if (content !== undefined) throw invalid("'content' goes with accept only");
    return { action: action as 'decline' | 'cancel' };
  }
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    throw invalid("accept needs 'content', an object of the answers by field name");
  }
  // No prototype: a field the MCP server named `__proto__` gets its value like any other.
  const values: Record<string, ElicitationValue> = Object.create(null);
  for (const [key, value] of Object.entries(content)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
      throw invalid(`'content.${key.slice(0, 64)}' must be a string, a number or true/false`);
    }
    values[key] = value;
  }
  return { action: 'accept', content: values };
}

/**
 * MCP servers' questions (elicitation) held for a session's client, like approvals: the asking tool call waits
 * until `POST …/elicitations/:elicitationId` answers (200 `{ answered: true }`), or the window passes (decline).
 * An unknown or already settled question is 404 ELICITATION_NOT_FOUND; values that do not fit the form 400.
 */
export const elicitationRoutes: RouteGroup = (app, deps) => {
  app.get('/sessions/:id/elicitations', async (context) => {
    const sessionId = await deps.ownedSession(context);
    return context.json({ elicitations: deps.elicitations?.pending(sessionId) ?? [] });
  });

  app.post('/sessions/:id/elicitations/:elicitationId', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const answer = answerOf(await readJsonObject(context));
    const outcome =
      deps.elicitations?.answer(sessionId, context.req.param('elicitationId'), answer) ?? 'not_found';
    if (outcome === 'not_found') {
      throw new HttpError({
        status: 404,
        code: 'ELICITATION_NOT_FOUND',
        message: 'no question of this session waits under that id (it was answered, withdrawn or expired)',
      });
    }
    if (outcome !== 'answered') throw invalid(outcome.problem);
    return context.json({ answered: true });
  });
};
