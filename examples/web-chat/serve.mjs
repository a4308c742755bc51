// Serves the web chat with a scripted model, to try the page without a model server:
// `npm run example:web-chat`, then open http://127.0.0.1:8787/#token=demo-token in a browser.
// The page itself ships with @youyou/server (packages/server/web-chat); `webChat: true` serves that copy
// (`webChat: { folder }` would serve a customised copy of it instead). `youyou serve` serves it too.
// The first message gets a reasoning line, a tool call and an answer; the second asks to write a note
// (a call that needs approval: click Approve or Deny); later ones get a short answer.
import { createServer, listen } from '@youyou/server';
import { demoAgent } from '../demo-agent.mjs';

const { agent, sessions } = await demoAgent({
  laterAnswer: [
    { type: 'text', text: 'The demo script has no more to say; ' },
    { type: 'delay', ms: 300 },
    { type: 'text', text: 'restart it for another round.' },
  ],
});
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
