// Three conversations at once on one built agent (maxActiveSessions: 3), with the scripted model provider.
// Run it with `npm run build -w @youyou/agent && node examples/many-sessions.mjs`.
import { AgentBuilder, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';

const cities = ['Tokyo', 'Lisbon', 'Lima'];
const provider = new ScriptedModelProvider({
  // Each answer names the city the user asked about, and streams in two pieces with a pause between them.
  responses: cities.map(() => (request) => {
    const last = request.messages.at(-1);
    const asked = last?.type === 'user' ? last.content.map((block) => block.text ?? '').join('') : '';
    return [
      { type: 'text', text: 'About ' },
      { type: 'delay', ms: 20 },
      { type: 'text', text: `${asked.replace('Tell me about ', '')}: noted.` },
    ];
  }),
});

const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 3 })
  .registerModelProvider(provider)
  .registerSessionStorage(new InMemorySessionStorage())
  .build();

const sessions = await Promise.all(cities.map(() => agent.newSession()));
try {
  await agent.newSession();
} catch (error) {
  console.log(`a fourth session: ${error.code}`);
}

// The three turns stream side by side; their events interleave in time.
const turns = await Promise.all(
  sessions.map((session, index) => session.sendMessage(`Tell me about ${cities[index]}`)),
);
await Promise.all(
  turns.map(async (turn, index) => {
    for await (const event of turn) {
      if (event.payload.type === 'text_delta')
        console.log(`session ${index + 1}: ${JSON.stringify(event.payload.text)}`);
      else console.log(`session ${index + 1}: ${event.payload.type}`);
    }
  }),
);

await sessions[0].close();
const fourth = await agent.newSession();
console.log(`after closing one, a new session starts: ${fourth.id !== sessions[0].id}`);
await agent.shutdown();
