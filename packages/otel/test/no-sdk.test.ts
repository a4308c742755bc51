import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { AgentBuilder, type AgentError } from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedResponse } from '@youyou/agent/testing';
import { createOtelPlugin } from '@youyou/otel';
import { expect, test } from 'vitest';
import { runTurn, slowTool } from './support/harness.js';

const script: ScriptedResponse[] = [
  [{ type: 'tool_call', toolName: 'lookup', callId: 'call-1' }],
  [{ type: 'text', text: 'done' }],
];

async function buildAgent(withPlugin: boolean) {
  const errors: AgentError[] = [];
  const provider = new ScriptedModelProvider({ responses: [...script, ...script] });
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => errors.push(error),
  })
    .registerModelProvider(provider)
    .registerTool(slowTool('lookup', { ms: 1 }));
  if (withPlugin) builder = builder.registerPlugin(createOtelPlugin({ captureContent: true }));
  const agent = await builder.build();
  return { agent, session: await agent.newSession(), errors, provider };
}

test('with no SDK registered the plugin declines the turn; an SDK registered later is used from the next turn', async () => {
  // No SDK: the API hands out non-recording spans.
  expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
  const without = await buildAgent(false);
  const withPlugin = await buildAgent(true);
  const types = await runTurn(withPlugin.session, 'go');
  expect(types).toEqual(await runTurn(without.session, 'go'));
  expect(types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
  expect(withPlugin.errors).toEqual([]);

  const spans = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }),
  );
  await runTurn(withPlugin.session, 'again');
  expect(
    spans
      .getFinishedSpans()
      .map((span) => span.name)
      .sort(),
  ).toEqual(['chat scripted-model', 'chat scripted-model', 'execute_tool lookup', 'invoke_agent youyou']);
  await withPlugin.agent.shutdown();
  await without.agent.shutdown();
});
