import { trace } from '@opentelemetry/api';
import { AgentBuilder, type AgentError } from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedResponse } from '@youyou/agent/testing';
import { createOtelPlugin } from '@youyou/otel';
import { expect, test } from 'vitest';
import { runTurn, slowTool } from './support/harness.js';

const script: ScriptedResponse[] = [
  [{ type: 'tool_call', toolName: 'lookup', callId: 'call-1' }],
  [{ type: 'text', text: 'done' }],
];

async function eventsOfTurn(withPlugin: boolean): Promise<{ types: string[]; errors: AgentError[] }> {
  const errors: AgentError[] = [];
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => errors.push(error),
  })
    .registerModelProvider(new ScriptedModelProvider({ responses: script }))
    .registerTool(slowTool('lookup', { ms: 1 }));
  if (withPlugin) builder = builder.registerPlugin(createOtelPlugin({ captureContent: true }));
  const agent = await builder.build();
  const types = await runTurn(await agent.newSession(), 'go');
  await agent.shutdown();
  return { types, errors };
}

test('with no SDK registered the plugin records nothing and the turn is the same as without it', async () => {
  // No SDK: the API hands out non-recording spans.
  expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
  const without = await eventsOfTurn(false);
  const withPlugin = await eventsOfTurn(true);
  expect(withPlugin.types).toEqual(without.types);
  expect(withPlugin.types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
  expect(withPlugin.errors).toEqual([]);
});
