// A sub-agent as a tool: the main session delegates a question to a researcher with its own prompt and tools,
// and the researcher's events arrive wrapped in `subagent` events. The researcher answers with structured
// output (`output`), so the tool result is JSON valid against its schema. Runs on the scripted model provider.
// Run it with `npm run build -w @youyou/agent && node examples/subagent.mjs`.
import { AgentBuilder, agentTool, InMemorySessionStorage, subagentLinksOf } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';

// Parent and child share the provider; the scripted answers are taken in the order the requests come.
const provider = new ScriptedModelProvider({
  responses: [
    // The main agent's first answer: delegate.
    [{ type: 'tool_call', toolName: 'researcher', arguments: { task: 'How long is the Douro river?' } }],
    // The researcher looks it up, then answers with JSON valid against its output schema.
    [{ type: 'tool_call', toolName: 'encyclopedia', arguments: { topic: 'Douro' } }],
    [
      { type: 'json', value: { river: 'Douro', lengthKm: 897 } },
      { type: 'usage', usage: { inputTokens: 210, outputTokens: 9 } },
    ],
    // The main agent answers with what the researcher found.
    [{ type: 'text', text: 'According to my researcher, the Douro is 897 km long.' }],
  ],
});

const encyclopedia = {
  name: 'encyclopedia',
  description: 'Looks a topic up.',
  parametersSchema: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
  isMutating: false,
  async execute() {
    return { content: 'Douro: river of Spain and Portugal, 897 km.', isError: false };
  },
};

const storage = new InMemorySessionStorage();
const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
  .registerModelProvider(provider)
  .registerTool(encyclopedia)
  .registerTool(
    agentTool({
      name: 'researcher',
      description: 'Researches the length of a river.',
      instructions: 'You research facts with the encyclopedia.',
      tools: ['encyclopedia'],
      output: {
        name: 'river_length',
        schema: {
          type: 'object',
          properties: { river: { type: 'string' }, lengthKm: { type: 'number' } },
          required: ['river', 'lengthKm'],
          additionalProperties: false,
        },
      },
    }),
  )
  .registerSessionStorage(storage)
  .build();

const session = await agent.newSession();
for await (const event of await session.sendMessage('How long is the Douro?')) {
  let payload = event.payload;
  let indent = '';
  while (payload.type === 'subagent') {
    if (payload.usage !== undefined)
      console.log(`${indent}  (sub-agent usage: ${JSON.stringify(payload.usage)})`);
    payload = payload.event;
    indent += '  ';
  }
  let detail = payload.type === 'text_delta' ? ` ${JSON.stringify(payload.text)}` : '';
  if (payload.type === 'tool_call_end') detail = ` ${payload.output.content}`;
  console.log(`${indent}${payload.type}${detail}`);
}
const links = subagentLinksOf(await storage.loadSession(session.id));
console.log(`child sessions: ${links.map((link) => `${link.toolName} ${link.sessionId}`).join(', ')}`);
await agent.shutdown();
