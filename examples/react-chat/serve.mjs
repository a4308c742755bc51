// Runs the React chat against a YouYou server with a scripted model, to try it without a model server:
// `npm run example:react-chat` (from the repository root), then open the address it prints.
// Two processes' worth in one: the YouYou server on 127.0.0.1:8787 (CORS for the app's origin only) and
// vite's dev server for the app on 127.0.0.1:5173. The first message gets a reasoning line, a tool call and
// an answer; the second asks to write a note (a call that needs approval: Approve or Deny); later ones get a
// slow answer, to try Stop and a reload mid-turn.
import { fileURLToPath } from 'node:url';
import { createServer, listen } from '@youyou/server';
import { createServer as createViteServer } from 'vite';
import { demoAgent } from '../demo-agent.mjs';

const API_PORT = Number(process.env.API_PORT ?? 8787);
const APP_PORT = Number(process.env.APP_PORT ?? 5173);
const APP_ORIGIN = `http://127.0.0.1:${APP_PORT}`;
const TOKEN = 'demo-token';

const { agent, sessions } = await demoAgent({
  laterAnswer: [
    { type: 'text', text: 'The demo script has no more to say. ' },
    { type: 'delay', ms: 2000 },
    { type: 'text', text: 'It takes its time, so that you can press Stop or reload the page; ' },
    { type: 'delay', ms: 2000 },
    { type: 'text', text: 'restart it for another round.' },
  ],
});
const server = createServer({
  agent,
  storage: sessions,
  auth: { tokens: { [TOKEN]: 'demo' } },
  cors: { origin: [APP_ORIGIN] },
});
const listening = await listen(server, { port: API_PORT, host: '127.0.0.1' });
const app = await createViteServer({
  root: fileURLToPath(new URL('.', import.meta.url)),
  configFile: false,
  server: { host: '127.0.0.1', port: APP_PORT, strictPort: true },
});
await app.listen();
const hash = new URLSearchParams({ api: listening.url, token: TOKEN });
process.stdout.write(`react chat: ${APP_ORIGIN}/#${hash} (Ctrl-C stops)\n`);
process.once('SIGINT', async () => {
  await app.close();
  await listening.close();
  await agent.shutdown();
  process.exit(0);
});
