/**
 * A `model_fallback` event reaches the client with the failure as a public error: its code and a fixed
 * sentence, never the provider's text (which may hold a key or an internal address).
 */
import { AgentBuilder, AgentError, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider, scriptedModel } from '@youyou/agent/testing';
import { expect, test } from 'vitest';
import { createServer, listen } from '../src/index.js';
import { isTurnEnd, readUntil, TOKENS } from './support/harness.js';

const LEAK = 'sk-live-internal-key at 10.1.2.3';

test('the fallback reason sent over SSE is the public error, without the provider text', async () => {
  const primary = new ScriptedModelProvider({
    id: 'vendor-a',
    responses: [
      [
        {
          type: 'error',
          error: new AgentError({
            code: 'PROVIDER_ERROR',
            message: `HTTP 529 overloaded (${LEAK})`,
            retryable: true,
          }),
        },
      ],
    ],
  });
  const backup = new ScriptedModelProvider({
    id: 'vendor-b',
    models: [scriptedModel({ id: 'backup-model' })],
    responses: [[{ type: 'text', text: 'from the backup' }]],
  });
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', fallbackModels: ['backup-model'] })
    .registerModelProvider(primary)
    .registerModelProvider(backup)
    .registerSessionStorage(storage)
    .build();
  const server = createServer({ agent, storage, auth: { tokens: { [TOKENS.alice]: 'alice' } } });
  const listening = await listen(server);
  try {
    const headers = { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' };
    const created = await fetch(`${listening.url}/sessions`, { method: 'POST', headers, body: '{}' });
    const { sessionId } = (await created.json()) as { sessionId: string };
    const response = await fetch(`${listening.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ content: 'hi' }),
    });
    const messages = await readUntil(response, isTurnEnd);
    const fallback = messages.find((message) => message.event === 'model_fallback');
    expect(fallback?.data.payload).toEqual({
      type: 'model_fallback',
      from: 'scripted-model',
      to: 'backup-model',
      reason: { code: 'PROVIDER_ERROR', message: 'the model provider failed; try again', retryable: true },
    });
    expect(JSON.stringify(messages)).not.toContain('10.1.2.3');
    expect(messages.map((message) => message.event)).toContain('text_delta');
  } finally {
    await listening.close();
    await agent.shutdown();
  }
});
