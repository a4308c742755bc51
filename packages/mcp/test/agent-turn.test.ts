import { AgentBuilder, type AgentEventPayload } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { expect, test } from 'vitest';
import { connectMcpServer } from '../src/index.js';
import { stdioConfig } from './support.js';

test('MCP tools registered in an Agent run in a turn and their results reach the model', async () => {
  await using server = await connectMcpServer(stdioConfig());
  const provider = new ScriptedModelProvider({
    responses: [
      [
        {
          type: 'tool_call',
          toolName: 'srv__echo',
          arguments: { text: 'from the model' },
          callId: 'call_echo',
        },
        { type: 'tool_call', toolName: 'srv__fail', callId: 'call_fail' },
      ],
      [{ type: 'text', text: 'done' }],
    ],
  });
  const builder = new AgentBuilder({ defaultModel: 'scripted-model' }).registerModelProvider(provider);
  for (const tool of server.tools) builder.registerTool(tool);
  const agent = await builder.build();
  try {
    const session = await agent.newSession();
    const turn = await session.sendMessage('use the tools');
    const payloads: AgentEventPayload[] = [];
    for await (const event of turn) payloads.push(event.payload);

    const ends = payloads.filter((payload) => payload.type === 'tool_call_end');
    expect(ends).toMatchObject([
      {
        callId: 'call_echo',
        toolName: 'srv__echo',
        success: true,
        output: { content: 'echo: from the model', isError: false },
      },
      {
        callId: 'call_fail',
        toolName: 'srv__fail',
        success: false,
        output: { content: 'it failed', isError: true },
      },
    ]);
    expect(payloads.at(-1)?.type).toBe('turn_complete');

    // The second model request carries both results, and offered the MCP tools by their prefixed names.
    const second = provider.requests[1];
    expect(JSON.stringify(second?.messages)).toContain('echo: from the model');
    expect(provider.requests[0]?.tools?.map((tool) => tool.name)).toContain('srv__write_note');
    await session.close();
  } finally {
    await agent.shutdown();
  }
});
