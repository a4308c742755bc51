/** An agent with the OpenTelemetry plugin, recording into in-memory span and metric exporters. */

import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { type Agent, AgentBuilder, type AgentError, type Session, type ToolHandler } from '@youyou/agent';
import {
  ScriptedModelProvider,
  type ScriptedModelProviderOptions,
  scriptedModel,
} from '@youyou/agent/testing';
import { createOtelPlugin } from '@youyou/otel';

/** Installs the async-hooks context manager once, as a host with an SDK would. */
let contextManagerInstalled = false;
export function installContextManager(): void {
  if (contextManagerInstalled) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextManagerInstalled = true;
}

/** A read-only tool that answers after `ms`, or fails when `fails` is set. */
export function slowTool(name: string, options: { ms: number; fails?: boolean }): ToolHandler {
  return {
    name,
    description: `${name} (test tool)`,
    parametersSchema: { type: 'object', properties: { text: { type: 'string' } } },
    isMutating: false,
    execute: async () => {
      await new Promise((resolve) => setTimeout(resolve, options.ms));
      if (options.fails === true) throw new Error(`${name} broke`);
      return { content: `${name} done`, isError: false };
    },
  };
}

/** What `traced` builds. */
export interface Traced {
  agent: Agent;
  session: Session;
  provider: ScriptedModelProvider;
  spans: InMemorySpanExporter;
  metricReader: PeriodicExportingMetricReader;
  tracerProvider: BasicTracerProvider;
  backgroundErrors: AgentError[];
}

/** Builds an agent with the plugin recording into in-memory exporters. */
export async function traced(options: {
  provider: Omit<ScriptedModelProviderOptions, 'models'> & { contextWindow?: number };
  tools?: ToolHandler[];
  captureContent?: boolean;
  compactThreshold?: number;
}): Promise<Traced> {
  installContextManager();
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricReader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 3_600_000,
  });
  const meterProvider = new MeterProvider({ readers: [metricReader] });
  const { contextWindow, ...providerOptions } = options.provider;
  const provider = new ScriptedModelProvider({
    ...providerOptions,
    models: [scriptedModel(contextWindow === undefined ? {} : { contextWindow })],
  });
  const backgroundErrors: AgentError[] = [];
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => backgroundErrors.push(error),
    ...(options.compactThreshold === undefined ? {} : { compactThreshold: options.compactThreshold }),
  })
    .registerModelProvider(provider)
    .registerPlugin(
      createOtelPlugin({
        tracerProvider,
        meterProvider,
        ...(options.captureContent === undefined ? {} : { captureContent: options.captureContent }),
      }),
    );
  for (const tool of options.tools ?? []) builder = builder.registerTool(tool);
  const agent = await builder.build();
  const session = await agent.newSession();
  return { agent, session, provider, spans, metricReader, tracerProvider, backgroundErrors };
}

/** Sends a message and reads the turn to its end; `cancelOn` cancels at the first event of that type. */
export async function runTurn(session: Session, text: string, cancelOn?: string): Promise<string[]> {
  const turn = await session.sendMessage(text);
  const types: string[] = [];
  for await (const event of turn) {
    types.push(event.payload.type);
    if (event.payload.type === cancelOn) turn.cancel();
  }
  return types;
}

/** The span's parent span id, or undefined for a root. */
export function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

/** The span's own id. */
export function idOf(span: ReadableSpan): string {
  return span.spanContext().spanId;
}

/** Milliseconds since the epoch of an OpenTelemetry HrTime. */
export function msOf(time: [number, number]): number {
  return time[0] * 1_000 + time[1] / 1_000_000;
}
