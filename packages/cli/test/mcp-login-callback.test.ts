import { describe, expect, test } from 'vitest';
import { listenForCallback } from '../src/modes/mcp-auth/callback.js';

describe('the login callback listener', () => {
  test('a redirect with another state is refused and the listener keeps waiting for the right one', async () => {
    const listener = await listenForCallback({ expectedState: 'the-state', timeoutMs: 60_000 });
    expect(listener.redirectUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    const forged = await fetch(`${listener.redirectUrl}?code=evil&state=guess`);
    expect(forged.status).toBe(400);
    const wrongPath = await fetch(new URL('/other?code=x&state=the-state', listener.redirectUrl));
    expect(wrongPath.status).toBe(404);
    const real = await fetch(`${listener.redirectUrl}?code=good&state=the-state`);
    expect(real.status).toBe(200);
    expect(await listener.code).toBe('good');
    // One use: the port is closed afterwards.
    await expect(fetch(`${listener.redirectUrl}?code=again&state=the-state`)).rejects.toThrow();
  });

  test('an error from the authorization server ends the wait with its code', async () => {
    const listener = await listenForCallback({ expectedState: 's', timeoutMs: 60_000 });
    await fetch(`${listener.redirectUrl}?error=access_denied&error_description=no%20thanks&state=s`);
    await expect(listener.code).rejects.toThrow('the authorization server answered access_denied: no thanks');
  });

  test('no answer within the timeout is reported and the listener closes', async () => {
    const listener = await listenForCallback({ expectedState: 's', timeoutMs: 1 });
    await expect(listener.code).rejects.toThrow(/no answer from the browser within/);
    await expect(fetch(`${listener.redirectUrl}?code=late&state=s`)).rejects.toThrow();
  });
});
