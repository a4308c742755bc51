import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { DataPointType, type HistogramMetricData } from '@opentelemetry/sdk-metrics';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, test } from 'vitest';
import { idOf, msOf, parentOf, runTurn, slowTool, type Traced, traced } from './support/harness.js';

const SECRET = 'the-user-secret-4711';
const padded = (label: string, length: number): string => `${label} ${SECRET}`.padEnd(length, '.');

/**
 * Four turns of 400-character messages (about 800 tokens in all), then a 4,400-character question pushes a
 * 4,000-token window past its half: that fifth turn compacts first, asks
 * for two slow tools and a failing one in one read-only batch, then answers. The sixth is cancelled mid-stream.
 */
async function scenario(captureContent: boolean): Promise<Traced & { hostSpanId: string; traceId: string }> {
  const setup = await traced({
    captureContent,
    compactThreshold: 0.5,
    tools: [
      slowTool('slow_a', { ms: 60 }),
      slowTool('slow_b', { ms: 60 }),
      slowTool('broken', { ms: 5, fails: true }),
    ],
    provider: {
      contextWindow: 4_000,
      responses: [
        ...Array.from({ length: 4 }, (_, index) => [
          { type: 'text' as const, text: padded(`answer ${index}`, 400) },
        ]),
        [
          { type: 'tool_call', toolName: 'slow_a', callId: 'call-a', arguments: { text: SECRET } },
          { type: 'tool_call', toolName: 'slow_b', callId: 'call-b' },
          { type: 'tool_call', toolName: 'broken', callId: 'call-c' },
          { type: 'usage', usage: { inputTokens: 900, outputTokens: 30, cachedInputTokens: 600 } },
        ],
        [
          { type: 'text', text: `final ${SECRET}` },
          { type: 'usage', usage: { inputTokens: 1000, outputTokens: 12 } },
          { type: 'done', stopReason: 'end_turn', responseModel: 'scripted-model-2026-01-01' },
        ],
        [{ type: 'text', text: 'partial' }, { type: 'hang' }],
      ],
      byPurpose: {
        compaction: [
          [
            { type: 'text', text: 'SUMMARY' },
            { type: 'usage', usage: { inputTokens: 700, outputTokens: 5 } },
          ],
        ],
      },
    },
  });
  const { session } = setup;
  for (let index = 0; index < 4; index += 1) await runTurn(session, padded(`question ${index}`, 400));
  setup.spans.reset();
  // The host's own span is active where it sends the message: the turn's span is its child.
  const host = setup.tracerProvider.getTracer('host').startSpan('host request');
  const types = await context.with(trace.setSpan(context.active(), host), () =>
    runTurn(session, padded('question 5', 4_400)),
  );
  host.end();
  expect(types).toContain('context_compacted');
  expect(await runTurn(session, 'cancel me', 'text_delta')).toContain('turn_cancelled');
  return { ...setup, hostSpanId: host.spanContext().spanId, traceId: host.spanContext().traceId };
}

function byName(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

function only(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = byName(spans, name);
  expect(found, name).toHaveLength(1);
  return found[0] as ReadableSpan;
}

const CONTENT_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
];

describe('@youyou/otel spans', () => {
  test('the span tree of a turn: compaction, two model calls, a parallel tool batch with a failing tool; then a cancel', async () => {
    const { spans, session, hostSpanId, traceId, agent } = await scenario(false);
    const finished = spans.getFinishedSpans();
    const [turn, cancelledTurn] = byName(finished, 'invoke_agent youyou');
    expect(turn).toBeDefined();
    expect(cancelledTurn).toBeDefined();
    if (turn === undefined || cancelledTurn === undefined) return;

    // The host's span is the parent of the turn; everything of the turn is the turn's child, in one trace.
    expect(parentOf(turn)).toBe(hostSpanId);
    expect(turn.spanContext().traceId).toBe(traceId);
    expect(turn.kind).toBe(SpanKind.INTERNAL);
    expect(turn.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.system': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.conversation.id': session.id,
      'gen_ai.agent.name': 'youyou',
      'youyou.turn.status': 'completed',
    });
    expect(turn.status.code).toBe(SpanStatusCode.UNSET);
    expect(turn.events.map((event) => event.name)).toContain('youyou.context_compacted');

    const children = finished.filter((span) => parentOf(span) === idOf(turn));
    const chats = children.filter((span) => span.name === 'chat scripted-model');
    expect(chats.map((span) => span.attributes['youyou.chat.purpose'])).toEqual([
      'compaction',
      'turn',
      'turn',
    ]);
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.request.model': 'scripted-model',
        'gen_ai.conversation.id': session.id,
        'youyou.chat.outcome': 'completed',
      });
    }
    const [compaction, first, second] = chats;
    expect(compaction?.attributes['gen_ai.usage.input_tokens']).toBe(700);
    expect(first?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 900,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 600,
      'gen_ai.response.finish_reasons': ['tool_use'],
    });
    expect(second?.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 1000,
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.response.model': 'scripted-model-2026-01-01',
    });
    // Only the call whose provider reported the answering model carries it.
    expect(compaction?.attributes).not.toHaveProperty('gen_ai.response.model');
    expect(first?.attributes).not.toHaveProperty('gen_ai.response.model');

    const tools = children.filter((span) => span.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(tools.map((span) => span.name).sort()).toEqual([
      'execute_tool broken',
      'execute_tool slow_a',
      'execute_tool slow_b',
    ]);
    const slowA = only(tools, 'execute_tool slow_a');
    const slowB = only(tools, 'execute_tool slow_b');
    const broken = only(tools, 'execute_tool broken');
    expect(slowA.attributes).toMatchObject({
      'gen_ai.tool.name': 'slow_a',
      'gen_ai.tool.call.id': 'call-a',
      'gen_ai.tool.type': 'function',
    });
    // The batch ran in parallel: each slow tool started before the other ended.
    expect(msOf(slowA.startTime)).toBeLessThan(msOf(slowB.endTime));
    expect(msOf(slowB.startTime)).toBeLessThan(msOf(slowA.endTime));
    // The tools ran between the first and the second model call.
    expect(msOf(slowA.startTime)).toBeGreaterThanOrEqual(msOf(first?.endTime ?? [0, 0]));
    expect(msOf(second?.startTime ?? [0, 0])).toBeGreaterThanOrEqual(msOf(slowA.endTime));
    expect(broken.status.code).toBe(SpanStatusCode.ERROR);
    expect(broken.attributes['error.type']).toBe('TOOL_EXECUTION_ERROR');
    expect(slowA.status.code).toBe(SpanStatusCode.UNSET);

    // The cancelled turn: a root span (no host span there), its model call cut short.
    expect(parentOf(cancelledTurn)).toBeUndefined();
    expect(cancelledTurn.attributes['youyou.turn.status']).toBe('cancelled');
    const cancelledChat = finished.filter((span) => parentOf(span) === idOf(cancelledTurn));
    expect(cancelledChat.map((span) => span.attributes['youyou.chat.outcome'])).toEqual(['cancelled']);

    // No message content anywhere without the host's opt-in.
    for (const span of finished) {
      for (const key of CONTENT_KEYS) expect(span.attributes[key], `${span.name} ${key}`).toBeUndefined();
      expect(JSON.stringify(span.attributes)).not.toContain(SECRET);
    }
    await agent.shutdown();
  });

  test('contents are recorded when the host opts in', async () => {
    const { spans, agent } = await scenario(true);
    const finished = spans.getFinishedSpans();
    const turn = byName(finished, 'invoke_agent youyou')[0];
    expect(String(turn?.attributes['gen_ai.input.messages'])).toContain(SECRET);
    const chats = byName(finished, 'chat scripted-model');
    const input = JSON.parse(String(chats[2]?.attributes['gen_ai.input.messages'])) as { role: string }[];
    expect(input.map((message) => message.role)).toContain('tool');
    expect(JSON.parse(String(chats[2]?.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: `final ${SECRET}` }], finish_reason: 'end_turn' },
    ]);
    expect(String(chats[1]?.attributes['gen_ai.system_instructions'])).toContain('"type":"text"');
    const slowA = byName(finished, 'execute_tool slow_a')[0];
    expect(JSON.parse(String(slowA?.attributes['gen_ai.tool.call.arguments']))).toEqual({ text: SECRET });
    expect(slowA?.attributes['gen_ai.tool.call.result']).toBe('slow_a done');
    await agent.shutdown();
  });

  test('a failed model call records its AgentError code on the chat span, the turn span and the duration metric', async () => {
    const { spans, session, metricReader, agent } = await traced({
      provider: { responses: [[{ type: 'error', error: new Error('upstream 500') }]] },
    });
    await runTurn(session, 'hi');
    const finished = spans.getFinishedSpans();
    const chat = only(finished, 'chat scripted-model');
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat.attributes['error.type']).toBe('PROVIDER_ERROR');
    expect(chat.attributes['youyou.chat.outcome']).toBe('failed');
    const turn = only(finished, 'invoke_agent youyou');
    expect(turn.status.code).toBe(SpanStatusCode.ERROR);
    expect(turn.attributes['error.type']).toBe('PROVIDER_ERROR');
    expect(turn.attributes['youyou.turn.status']).toBe('failed');
    const duration = await histogram(metricReader, 'gen_ai.client.operation.duration');
    expect(duration.dataPoints.map((point) => point.attributes['error.type'])).toEqual(['PROVIDER_ERROR']);
    await agent.shutdown();
  });

  test('metrics: gen_ai.client.token.usage by token type and gen_ai.client.operation.duration per model call', async () => {
    const { metricReader, agent } = await scenario(false);
    const usage = await histogram(metricReader, 'gen_ai.client.token.usage');
    expect(usage.descriptor.unit).toBe('{token}');
    const sums = new Map<string, number>();
    for (const point of usage.dataPoints) {
      expect(point.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'scripted',
        'gen_ai.request.model': 'scripted-model',
      });
      const type = String(point.attributes['gen_ai.token.type']);
      sums.set(type, (sums.get(type) ?? 0) + (point.value.sum ?? 0));
    }
    // The three calls that reported usage: compaction 700/5, first 900/30, second 1000/12.
    expect(sums.get('input')).toBe(2_600);
    expect(sums.get('output')).toBe(47);
    // The answering model is a metric attribute too, on the one call whose provider reported it.
    const byResponseModel = usage.dataPoints.filter(
      (point) => point.attributes['gen_ai.response.model'] === 'scripted-model-2026-01-01',
    );
    expect(byResponseModel.map((point) => point.value.sum).sort()).toEqual([1_000, 12].sort());
    const duration = await histogram(metricReader, 'gen_ai.client.operation.duration');
    expect(duration.descriptor.unit).toBe('s');
    const count = duration.dataPoints.reduce((total, point) => total + point.value.count, 0);
    // Four warm-up calls, compaction, two turn calls, and the cancelled one.
    expect(count).toBe(8);
    await agent.shutdown();
  });
});

async function histogram(reader: Traced['metricReader'], name: string): Promise<HistogramMetricData> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((candidate) => candidate.descriptor.name === name);
  expect(metric?.dataPointType).toBe(DataPointType.HISTOGRAM);
  return metric as HistogramMetricData;
}
