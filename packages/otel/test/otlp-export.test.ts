import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { createOtelPlugin } from '@youyou/otel';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runTurn, slowTool } from './support/harness.js';

/** One attribute as OTLP/JSON encodes it. */
interface OtlpAttribute {
  key: string;
  value: {
    stringValue?: string;
    intValue?: string | number;
    arrayValue?: { values: { stringValue?: string }[] };
  };
}

/** One span as OTLP/JSON encodes it (the fields this test reads). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: OtlpAttribute[];
  status?: { code?: number };
}

interface OtlpRequest {
  resourceSpans: { scopeSpans: { scope: { name: string }; spans: OtlpSpan[] }[] }[];
}

/** A receiver on 127.0.0.1 keeping every OTLP/HTTP JSON request it was sent. */
const received: { path: string; contentType: string; body: OtlpRequest }[] = [];
const server = createServer((request: IncomingMessage, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    received.push({
      path: request.url ?? '',
      contentType: String(request.headers['content-type']),
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest,
    });
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

function attribute(span: OtlpSpan, key: string): string | number | string[] | undefined {
  const value = span.attributes.find((candidate) => candidate.key === key)?.value;
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.arrayValue?.values.map((item) => item.stringValue ?? '');
}

test('spans reach an OTLP/HTTP receiver through the global tracer provider, decodable and in the conventions', async () => {
  const { port } = server.address() as AddressInfo;
  const exporter = new OTLPTraceExporter({ url: `http://127.0.0.1:${port}/v1/traces` });
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  // The host registers its SDK globally; the plugin is given nothing and finds it.
  trace.setGlobalTracerProvider(tracerProvider);
  const provider = new ScriptedModelProvider({
    responses: [
      [
        { type: 'tool_call', toolName: 'lookup', callId: 'call-1' },
        { type: 'usage', usage: { inputTokens: 42, outputTokens: 7 } },
      ],
      [
        { type: 'text', text: 'found it' },
        { type: 'done', stopReason: 'end_turn' },
      ],
    ],
  });
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .registerTool(slowTool('lookup', { ms: 1 }))
    .registerPlugin(createOtelPlugin())
    .build();
  const session = await agent.newSession();
  await runTurn(session, 'find it');
  await tracerProvider.forceFlush();
  await agent.shutdown();
  await tracerProvider.shutdown();

  expect(received.length).toBeGreaterThan(0);
  for (const request of received) {
    expect(request.path).toBe('/v1/traces');
    expect(request.contentType).toContain('application/json');
  }
  const spans = received.flatMap((request) =>
    request.body.resourceSpans.flatMap((resource) =>
      resource.scopeSpans
        .filter((scope) => scope.scope.name === '@youyou/otel')
        .flatMap((scope) => scope.spans),
    ),
  );
  expect(spans.map((span) => span.name).sort()).toEqual([
    'chat scripted-model',
    'chat scripted-model',
    'execute_tool lookup',
    'invoke_agent youyou',
  ]);
  const turn = spans.find((span) => span.name === 'invoke_agent youyou');
  expect(turn?.parentSpanId ?? '').toBe('');
  for (const span of spans) {
    expect(span.traceId).toBe(turn?.traceId);
    if (span !== turn) expect(span.parentSpanId).toBe(turn?.spanId);
    expect(attribute(span, 'gen_ai.conversation.id')).toBe(session.id);
  }
  const chats = spans.filter((span) => span.name === 'chat scripted-model');
  // The first call reported usage, the second did not.
  expect(chats.map((span) => attribute(span, 'gen_ai.usage.input_tokens')).sort()).toEqual([42, undefined]);
  const withUsage = chats.find((span) => attribute(span, 'gen_ai.usage.input_tokens') === 42) as OtlpSpan;
  expect(attribute(withUsage, 'gen_ai.usage.output_tokens')).toBe(7);
  expect(attribute(withUsage, 'gen_ai.operation.name')).toBe('chat');
  expect(attribute(withUsage, 'gen_ai.provider.name')).toBe('scripted');
  expect(attribute(withUsage, 'gen_ai.response.finish_reasons')).toEqual(['tool_use']);
  const tool = spans.find((span) => span.name === 'execute_tool lookup') as OtlpSpan;
  expect(attribute(tool, 'gen_ai.tool.call.id')).toBe('call-1');
  expect(attribute(tool, 'gen_ai.tool.name')).toBe('lookup');
});
