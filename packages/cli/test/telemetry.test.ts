import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  type ChatServer,
  startChatServer,
  textReply,
  toolCallReply,
  usageReply,
} from '../../../test-support/cli-wire.js';
import { telemetryTargets } from '../src/runtime/telemetry.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, runCli, type Sandbox } from './support/cli.js';

/** What an OTLP/HTTP JSON receiver got: the path and the decoded body of each request. */
interface Received {
  path: string;
  contentType: string;
  body: unknown;
  raw: string;
}

/** A collector stand-in on 127.0.0.1 that decodes every OTLP/HTTP JSON request. */
async function startReceiver(): Promise<{ server: Server; url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({
        path: request.url ?? '',
        contentType: String(request.headers['content-type']),
        body: JSON.parse(raw),
        raw,
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, received };
}

interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}
interface OtlpSpan {
  name: string;
  spanId: string;
  parentSpanId?: string;
  attributes: OtlpKeyValue[];
}
interface OtlpTraces {
  resourceSpans: { resource: { attributes: OtlpKeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}
interface OtlpMetrics {
  resourceMetrics: { scopeMetrics: { metrics: { name: string }[] }[] }[];
}

function attributeValue(attributes: OtlpKeyValue[], key: string): string | number | undefined {
  const value = attributes.find((attribute) => attribute.key === key)?.value;
  if (value?.stringValue !== undefined) return value.stringValue;
  return value?.intValue === undefined ? undefined : Number(value.intValue);
}

let chat: ChatServer;
let sandbox: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(ensureBuilt, 180_000);

beforeEach(async () => {
  chat = await startChatServer();
  sandbox = await createSandbox();
  receiver = await startReceiver();
});

afterEach(async () => {
  await chat.close();
  await sandbox.remove();
  await new Promise((resolve) => receiver.server.close(resolve));
});

describe('youyou with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  test('exports the turn, its model calls and its tool call over OTLP/HTTP, without message contents', async () => {
    await writeFile(path.join(sandbox.workspace, 'notes.txt'), 'the secret word is pineapple\n');
    chat.reply(toolCallReply({ id: 'call_1', name: 'read_file', arguments: { path: 'notes.txt' } }), () =>
      usageReply({ prompt: 20, completion: 5 }, 'The word is pineapple.'),
    );
    const result = await runCli({
      args: ['-p', 'what is the secret word?', '--base-url', chat.baseURL],
      sandbox,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`, OTEL_SERVICE_NAME: 'youyou-test' },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('The word is pineapple.\n');

    const traces = receiver.received.filter((request) => request.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    for (const request of traces) expect(request.contentType).toContain('application/json');
    const resources = traces.flatMap((request) => (request.body as OtlpTraces).resourceSpans);
    for (const resource of resources)
      expect(attributeValue(resource.resource.attributes, 'service.name')).toBe('youyou-test');
    const spans = resources.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    const turn = spans.find((span) => span.name === 'invoke_agent youyou');
    expect(turn).toBeDefined();
    const children = spans.filter((span) => span.parentSpanId === turn?.spanId);
    expect(children.map((span) => span.name).sort()).toEqual([
      'chat llama3.2',
      'chat llama3.2',
      'execute_tool read_file',
    ]);
    const chats = children.filter((candidate) => candidate.name.startsWith('chat'));
    for (const span of chats) {
      expect(attributeValue(span.attributes, 'gen_ai.operation.name')).toBe('chat');
      expect(attributeValue(span.attributes, 'youyou.chat.purpose')).toBe('turn');
    }
    // The answer's call reported its usage; the tool call's reported none, and its span carries none.
    const usages = chats.map((span) => [
      attributeValue(span.attributes, 'gen_ai.usage.input_tokens'),
      attributeValue(span.attributes, 'gen_ai.usage.output_tokens'),
    ]);
    expect(usages).toContainEqual([20, 5]);
    expect(usages).toContainEqual([undefined, undefined]);
    // The memory extraction at close is traced too, outside the turn.
    const memory = spans.filter(
      (span) => attributeValue(span.attributes, 'youyou.chat.purpose') === 'memory_extraction',
    );
    expect(memory).toHaveLength(1);

    const metrics = receiver.received.filter((request) => request.path === '/v1/metrics');
    const names = metrics.flatMap((request) =>
      (request.body as OtlpMetrics).resourceMetrics.flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => metric.name)),
      ),
    );
    expect(names).toEqual(
      expect.arrayContaining(['gen_ai.client.token.usage', 'gen_ai.client.operation.duration']),
    );
    // No opt-in: neither the question, the file nor the answer left the machine.
    for (const request of receiver.received) expect(request.raw).not.toContain('pineapple');
  }, 60_000);

  test('without the variable nothing is sent', async () => {
    chat.reply(textReply('ok'));
    const result = await runCli({ args: ['-p', 'hi', '--base-url', chat.baseURL], sandbox });
    expect(result.code).toBe(0);
    expect(receiver.received).toEqual([]);
  }, 60_000);
});

describe('telemetryTargets', () => {
  const quiet = (): void => {};

  test('builds the signal URLs from the base endpoint; a signal variable wins as it is', () => {
    expect(
      telemetryTargets({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }, warn: quiet }),
    ).toEqual({
      tracesUrl: 'http://127.0.0.1:4318/v1/traces',
      metricsUrl: 'http://127.0.0.1:4318/v1/metrics',
      serviceName: 'youyou',
      captureContent: false,
    });
    expect(
      telemetryTargets({
        env: {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/traces',
          OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        },
        warn: quiet,
      }),
    ).toMatchObject({
      tracesUrl: 'http://collector:4318/custom/traces',
      captureContent: true,
    });
    expect(
      telemetryTargets({
        env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/t' },
        warn: quiet,
      }),
    ).not.toHaveProperty('metricsUrl');
  });

  test('off without an endpoint, with OTEL_SDK_DISABLED, and (with a warning) for a URL that is not http(s)', () => {
    expect(telemetryTargets({ env: {}, warn: quiet })).toBeUndefined();
    expect(telemetryTargets({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, warn: quiet })).toBeUndefined();
    expect(
      telemetryTargets({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' },
        warn: quiet,
      }),
    ).toBeUndefined();
    const warnings: string[] = [];
    expect(
      telemetryTargets({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://x:4317' },
        warn: (text) => warnings.push(text),
      }),
    ).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });
});
