// A structured-output turn of @youyou/agent on the scripted model provider: the model looks something up
// with a tool, answers JSON that misses a field, gets the one repair round, and the turn's parsed answer
// comes back in `turn_complete.output` and `RunningTurn.done`. Needs no model server.
// Run it with `npm run example:structured` (which builds the package first).
import { AgentBuilder, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider, scriptedModel } from '@youyou/agent/testing';

// The scripted model says it honours `responseFormat` itself, as the OpenAI and Anthropic models do.
const model = scriptedModel({
  capabilities: { toolUse: true, vision: false, streaming: true, structuredOutput: true },
});

const provider = new ScriptedModelProvider({
  models: [model],
  responses: [
    [{ type: 'tool_call', toolName: 'forecast', arguments: { city: 'Bergen' } }],
    // The first answer leaves out `rainy`: the runtime feeds the schema errors back once.
    [{ type: 'json', value: { city: 'Bergen', celsius: 11 } }],
    [{ type: 'json', value: { city: 'Bergen', celsius: 11, rainy: true }, chunks: 3 }],
  ],
});

const forecast = {
  name: 'forecast',
  description: "Tomorrow's forecast of a city.",
  parametersSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  isMutating: false,
  async execute() {
    return { content: '11°C, rain all day', isError: false };
  },
};

const weatherSchema = {
  type: 'object',
  properties: {
    city: { type: 'string' },
    celsius: { type: 'number' },
    rainy: { type: 'boolean' },
  },
  required: ['city', 'celsius', 'rainy'],
  additionalProperties: false,
};

const storage = new InMemorySessionStorage();
const agent = await new AgentBuilder({ defaultModel: model.id })
  .registerModelProvider(provider)
  .registerTool(forecast)
  .registerSessionStorage(storage)
  .build();

const session = await agent.newSession();
const turn = await session.sendMessage('Will I need an umbrella in Bergen tomorrow?', {
  output: { schema: weatherSchema, name: 'weather', description: "Tomorrow's weather" },
});
for await (const event of turn) {
  const { type, ...rest } = event.payload;
  console.log(`#${event.sequence} ${type}`, Object.keys(rest).length > 0 ? JSON.stringify(rest) : '');
}
const result = await turn.done;
console.log(`\nstatus: ${result.status}`);
console.log('output:', result.output);
console.log(
  `the model was asked for '${provider.requests[0]?.responseFormat?.name}' in each of its ${provider.requests.length} calls`,
);
const repair = session.messages().find((message) => message.type === 'system');
console.log(`repair message saved in the history:\n${repair?.content}`);

// A bad schema is refused at the call, before any turn starts.
try {
  await session.sendMessage('again', { output: { schema: { type: 'string' } } });
} catch (error) {
  console.log(`\nrejected: ${error.code}`);
}
await session.close();
await agent.shutdown();
