// Serves the web chat with a scripted model, to try the page without a model server:
// `npm run example:web-chat`, then open http://127.0.0.1:8787/#token=demo-token in a browser.
// The page itself ships with @youyou/server (packages/server/web-chat); `webChat: true` serves that copy
// (`webChat: { folder }` would serve a customised copy of it instead). `youyou serve` serves it too.
// The first message gets a reasoning line, a tool call and an answer; the second asks to write a note
// (a call that needs approval: click Approve or Deny); later ones get a short answer.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentBuilder, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { createServer, listen } from '@youyou/server';

const notes = await mkdtemp(join(tmpdir(), 'youyou-web-chat-notes-'));
const later = Array.from({ length: 50 }, () => [
  { type: 'text', text: 'The demo script has no more to say; ' },
  { type: 'delay', ms: 300 },
  { type: 'text', text: 'restart it for another round.' },
]);
const provider = new ScriptedModelProvider({
  responses: [
    [
      { type: 'reasoning', text: 'The user wants the time; the clock tool knows it.' },
      { type: 'tool_call', toolName: 'clock', arguments: {} },
    ],
    [
      { type: 'text', text: 'It is ' },
      { type: 'delay', ms: 400 },
      { type: 'text', text: 'noon.' },
    ],
    [{ type: 'tool_call', toolName: 'write_note', arguments: { text: 'Buy milk' } }],
    [{ type: 'text', text: 'Done: the note is written.' }],
    ...later,
  ],
});
const sessions = new InMemorySessionStorage();
const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 8 })
  .registerModelProvider(provider)
  .registerSessionStorage(sessions)
  .registerTool({
    name: 'clock',
    description: 'tells the time',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => ({ content: '12:00', isError: false }),
  })
  .registerTool({
    name: 'write_note',
    description: 'writes a note file',
    parametersSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      await writeFile(join(notes, 'note.txt'), String(input.arguments.text));
      return { content: `written to ${join(notes, 'note.txt')}`, isError: false };
    },
  })
  .build();
const server = createServer({
  agent,
  storage: sessions,
  auth: { tokens: { 'demo-token': 'demo' } },
  webChat: true,
});
const port = Number(process.env.PORT ?? 8787);
const listening = await listen(server, { port, host: '127.0.0.1' });
process.stdout.write(`web chat: ${listening.url}/#token=demo-token (Ctrl-C stops)\n`);
process.once('SIGINT', async () => {
  await listening.close();
  await agent.shutdown();
  process.exit(0);
});
