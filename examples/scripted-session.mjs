// Drives one session of @youyou/agent with the scripted model provider and prints every event.
// Run it with `npm run example` (which builds the package first).
import { AgentBuilder, InMemoryMemoryStorage, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';

const provider = new ScriptedModelProvider({
  responses: [
    [
      { type: 'reasoning', text: 'The user wants the time in two cities; I will look both up.' },
      { type: 'text', text: 'Let me check both clocks.' },
      { type: 'tool_call', toolName: 'clock', arguments: { city: 'Tokyo' } },
      { type: 'tool_call', toolName: 'clock', arguments: { city: 'Lisbon' } },
      { type: 'usage', usage: { inputTokens: 412, outputTokens: 38 } },
    ],
    [
      { type: 'text', text: 'It is 09:00 in Tokyo ' },
      { type: 'text', text: 'and 00:00 in Lisbon.' },
      { type: 'usage', usage: { inputTokens: 506, outputTokens: 17 } },
    ],
  ],
  byPurpose: {
    memory_extraction: [
      [
        {
          type: 'text',
          text: '{"memories":[{"content":"The user keeps track of Tokyo and Lisbon time.","category":"fact"}]}',
        },
      ],
    ],
  },
});

const clock = {
  name: 'clock',
  description: 'Tells the local time of a city.',
  parametersSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  isMutating: false,
  async execute({ arguments: args }) {
    const times = { Tokyo: '09:00', Lisbon: '00:00' };
    return { content: times[args.city] ?? 'unknown city', isError: false };
  },
};

const storage = new InMemorySessionStorage();
const memories = new InMemoryMemoryStorage();
const agent = await new AgentBuilder({
  defaultModel: 'scripted-model',
  systemInstructions: ['You are a helpful assistant.'],
  memoryCheckpointInterval: 0,
})
  .registerModelProvider(provider)
  .registerTool(clock)
  .registerSessionStorage(storage)
  .registerMemoryStorage(memories)
  .build();

const session = await agent.newSession();
const turn = await session.sendMessage('What time is it in Tokyo and Lisbon?');
for await (const event of turn) {
  const { type, ...rest } = event.payload;
  console.log(`#${event.sequence} ${type}`, Object.keys(rest).length > 0 ? JSON.stringify(rest) : '');
}
await session.close();
const saved = await storage.loadSession(session.id);
console.log(`\nsaved ${saved?.length ?? 0} events for session ${session.id}`);
for (const memory of await memories.search('default', '', 10)) console.log(`memory: ${memory.content}`);
console.log(`the model received ${provider.requests.length} requests`);
await agent.shutdown();
