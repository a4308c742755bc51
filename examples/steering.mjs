// Steering a running turn and queueing a follow-up, on the scripted model provider.
// Run it with `npm run build -w @youyou/agent && node examples/steering.mjs`.
import { AgentBuilder, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';

let release;
const slowSearch = {
  name: 'search',
  description: 'Searches the docs (slowly).',
  parametersSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  isMutating: false,
  async execute() {
    // Runs until the example has steered the turn.
    await new Promise((resolve) => {
      release = resolve;
    });
    return { content: 'Found 3 pages about caching.', isError: false };
  },
};

const provider = new ScriptedModelProvider({
  responses: [
    [{ type: 'tool_call', toolName: 'search', arguments: { query: 'caching' } }],
    // This request already holds the steered message, right after the search result.
    (request) => [
      { type: 'text', text: `(I read: "${lastUserText(request)}") Three pages, all about Redis.` },
    ],
    [{ type: 'text', text: 'The follow-up gets its own turn: yes, Redis 7.' }],
  ],
});

function lastUserText(request) {
  const user = request.messages.findLast((message) => message.type === 'user');
  return user.content.map((block) => block.text ?? '').join('');
}

const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
  .registerModelProvider(provider)
  .registerTool(slowSearch)
  .registerSessionStorage(new InMemorySessionStorage())
  .build();
const session = await agent.newSession();

const turn = await session.sendMessage('Find the caching docs.');
let followUp;
for await (const event of turn) {
  const { type } = event.payload;
  console.log(`turn 1: ${type}${type === 'text_delta' ? ` ${JSON.stringify(event.payload.text)}` : ''}`);
  if (type === 'tool_call_start') {
    // While the tool runs: redirect this turn, and queue a question for after it.
    await session.steer('Only the Redis ones, please.');
    followUp = session.followUp('Which Redis version?');
    release();
  }
}
for await (const event of await followUp) {
  const { type } = event.payload;
  console.log(`turn 2: ${type}${type === 'text_delta' ? ` ${JSON.stringify(event.payload.text)}` : ''}`);
}
console.log(
  session
    .messages()
    .map((message) => message.type)
    .join(' → '),
);
await agent.shutdown();
