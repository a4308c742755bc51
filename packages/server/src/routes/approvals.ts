import { isAgentError, type Session } from '@youyou/agent';
import { onlyKeys, optionalString, readJsonObject } from '../http/body.js';
import { HttpError } from '../http/errors.js';
import type { RouteGroup } from './route-deps.js';

/**
 * The decisions on a suspended turn's calls and its continuation. A continuation that cannot start answers
 * what stopped it, each cause with its own status and code: a call still undecided after a decision is 202
 * `{ continued: false }` (the last decision continues the turn); nothing suspended is 409
 * NOTHING_TO_CONTINUE; a running turn 409 TURN_BUSY; a closed session 409 SESSION_CLOSED; a storage failure
 * 503 STORAGE_ERROR; anything else what the error table says.
 */
export const approvalRoutes: RouteGroup = (app, deps) => {
  const { hub } = deps;

  app.post('/sessions/:id/approvals/:callId', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['approved', 'reason']);
    if (typeof body.approved !== 'boolean') {
      throw new HttpError({
        status: 400,
        code: 'INVALID_INPUT',
        message: "'approved' must be true or false",
      });
    }
    const reason = optionalString(body, 'reason');
    const session = await hub.session(sessionId);
    const callId = context.req.param('callId');
    if (body.approved) await session.approve(callId);
    else await session.deny(callId, reason);
    const turnOptions = await deps.turnOptionsOf(context.get('tenant'));
    try {
      return await deps.streamTurn(context, sessionId, () => session.continue(turnOptions));
    } catch (error) {
      if (othersUndecided(error, session)) return context.json({ continued: false }, 202);
      throw continueFailure(error, session);
    }
  });

  app.post('/sessions/:id/continue', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, []);
    const session = await hub.session(sessionId);
    const turnOptions = await deps.turnOptionsOf(context.get('tenant'));
    // INVALID_INPUT while a pending call is undecided and its approval window is still open.
    try {
      return await deps.streamTurn(context, sessionId, () => session.continue(turnOptions));
    } catch (error) {
      throw continueFailure(error, session);
    }
  });
};

// Without options, `continue()` refuses with INVALID_INPUT for two causes only: no turn is suspended, or a
// call of the suspended one is undecided. The held calls tell them apart: a suspended turn has some.

/** Whether `continue()` failed because other calls of the suspended turn still wait for a decision. */
function othersUndecided(error: unknown, session: Session): boolean {
  return isAgentError(error) && error.code === 'INVALID_INPUT' && session.pendingApprovals().length > 0;
}

/** The error a failed `continue()` answers with: NOTHING_TO_CONTINUE when no turn is suspended, else itself. */
function continueFailure(error: unknown, session: Session): unknown {
  if (isAgentError(error) && error.code === 'INVALID_INPUT' && session.pendingApprovals().length === 0) {
    return new HttpError({
      status: 409,
      code: 'NOTHING_TO_CONTINUE',
      message:
        'no turn of this session waits for approvals (it ended or was continued already); send a message',
    });
  }
  return error;
}
