import {
  type Attributes,
  type Context,
  context,
  createNoopMeter,
  type Histogram,
  type Meter,
  type MeterProvider,
  metrics,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { AgentEvent, Observation, Plugin, PluginContext } from '@youyou/agent';
import {
  ATTR,
  cacheWriteTokens,
  inputMessagesJson,
  METRIC,
  OPERATION,
  outputMessagesJson,
  systemInstructionsJson,
  TOOL_FAILURE_TYPE,
} from './conventions.js';

/** What `createOtelPlugin` takes; everything is optional. */
export interface OtelPluginOptions {
  /** Default: the global tracer provider (a no-op until the host registers an SDK). */
  tracerProvider?: TracerProvider;
  /** Default: the global meter provider (a no-op until the host registers an SDK). */
  meterProvider?: MeterProvider;
  /**
   * Records message contents: the user's input, the prompts and messages sent to the model, its answers, tool
   * arguments and results. Default false: they hold user data, so the host must opt in.
   */
  captureContent?: boolean;
  /** `gen_ai.agent.name` of the turn spans; default `'youyou'`. */
  agentName?: string;
}

/** The instrumentation scope's name and version. */
const SCOPE = { name: '@youyou/otel', version: '0.1.0' };

/** What the global tracer provider hands out while no SDK is registered (this API copy's own no-op). */
const NO_TRACING = new ProxyTracerProvider().getDelegate();
const NO_METRICS = createNoopMeter();

/** The spans open for one turn. */
interface TurnTrace {
  span: Span;
  /** The turn span's context: its model calls and tools are its children. */
  context: Context;
  /** The last error event of the turn: a failed turn's span records its code. */
  lastErrorCode: string | undefined;
  tools: Map<string, Span>;
}

/** One open model call. */
interface ChatTrace {
  span: Span;
  startedAt: number;
  attributes: Attributes;
}

/**
 * The tracing and metrics of one agent: an observer (PluginContext.observe) turning observations into
 * `invoke_agent`, `chat` and `execute_tool` spans and the two GenAI client histograms.
 */
class GenAiTelemetry {
  readonly #tracer: Tracer;
  /** Given by the host, else undefined: the global one is looked up, as a host may register it late. */
  readonly #tracerProvider: TracerProvider | undefined;
  readonly #meterProvider: MeterProvider | undefined;
  #meter: Meter;
  #tokenUsage: Histogram;
  #duration: Histogram;
  readonly #captureContent: boolean;
  readonly #agentName: string;
  readonly #turns = new Map<string, TurnTrace>();
  readonly #chats = new Map<string, ChatTrace>();

  constructor(options: OtelPluginOptions) {
    this.#tracerProvider = options.tracerProvider;
    this.#meterProvider = options.meterProvider;
    // The global provider is a proxy: its tracer follows an SDK registered later.
    this.#tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE.name, SCOPE.version);
    const meter = this.#currentMeter();
    this.#meter = meter;
    this.#tokenUsage = tokenUsageHistogram(meter);
    this.#duration = durationHistogram(meter);
    this.#captureContent = options.captureContent === true;
    this.#agentName = options.agentName ?? 'youyou';
  }

  /**
   * Asked by the runtime once per turn: false while neither tracing nor metrics go anywhere (no SDK registered
   * and no provider given), so such a turn costs nothing. Picks up a global meter provider registered late.
   */
  readonly enabled = (): boolean => {
    const meter = this.#currentMeter();
    if (meter !== this.#meter) this.#useMeter(meter);
    if (meter !== NO_METRICS) return true;
    if (this.#tracerProvider !== undefined) return true;
    const global = trace.getTracerProvider();
    const delegate = global instanceof ProxyTracerProvider ? global.getDelegate() : global;
    return delegate !== NO_TRACING;
  };

  #useMeter(meter: Meter): void {
    this.#meter = meter;
    this.#tokenUsage = tokenUsageHistogram(meter);
    this.#duration = durationHistogram(meter);
  }

  #currentMeter(): Meter {
    return (this.#meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE.name, SCOPE.version);
  }

  /** The observer: one switch per observation; streamed deltas fall through at once. */
  readonly observe = (observation: Observation): void => {
    switch (observation.type) {
      case 'agent_event':
        this.#onEvent(observation.event);
        return;
      case 'turn_start':
        this.#onTurnStart(observation);
        return;
      case 'turn_end':
        this.#onTurnEnd(observation);
        return;
      case 'model_call_start':
        this.#onChatStart(observation);
        return;
      case 'model_call_end':
        this.#onChatEnd(observation);
        return;
    }
  };

  /** Ends whatever is still open (a plugin shut down mid-turn); the spans say they were cut short. */
  endAll(): void {
    for (const [callId, chat] of this.#chats) {
      chat.span.setAttribute(ATTR.outcome, 'cancelled');
      chat.span.end();
      this.#chats.delete(callId);
    }
    for (const [turnId, turn] of this.#turns) {
      for (const tool of turn.tools.values()) tool.end();
      turn.span.setAttribute(ATTR.turnStatus, 'cancelled');
      turn.span.end();
      this.#turns.delete(turnId);
    }
  }

  #onTurnStart(observation: Extract<Observation, { type: 'turn_start' }>): void {
    // The host's active span, where the host called sendMessage, is the turn's parent.
    const parent = context.active();
    const span = this.#tracer.startSpan(
      `${OPERATION.invokeAgent} ${this.#agentName}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.operationName]: OPERATION.invokeAgent,
          [ATTR.providerName]: observation.providerId,
          [ATTR.system]: observation.providerId,
          [ATTR.agentName]: this.#agentName,
          [ATTR.requestModel]: observation.modelId,
          [ATTR.conversationId]: observation.sessionId,
        },
      },
      parent,
    );
    if (this.#captureContent && span.isRecording()) {
      span.setAttribute(
        ATTR.inputMessages,
        inputMessagesJson([{ type: 'user', content: [...observation.input] }]),
      );
    }
    this.#turns.set(observation.turnId, {
      span,
      context: trace.setSpan(parent, span),
      lastErrorCode: undefined,
      tools: new Map(),
    });
  }

  #onTurnEnd(observation: Extract<Observation, { type: 'turn_end' }>): void {
    const turn = this.#turns.get(observation.turnId);
    if (turn === undefined) return;
    this.#turns.delete(observation.turnId);
    for (const tool of turn.tools.values()) tool.end();
    turn.span.setAttribute(ATTR.turnStatus, observation.status);
    if (observation.status === 'failed') {
      const code = turn.lastErrorCode ?? 'INTERNAL_ERROR';
      turn.span.setAttribute(ATTR.errorType, code);
      turn.span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    }
    turn.span.end();
  }

  #onEvent(event: AgentEvent): void {
    const payload = event.payload;
    switch (payload.type) {
      case 'text_delta':
      case 'reasoning_delta':
      case 'turn_complete':
      case 'turn_cancelled':
        return;
      case 'tool_call_start': {
        const turn = this.#turns.get(event.turnId);
        if (turn === undefined) return;
        const span = this.#tracer.startSpan(
          `${OPERATION.executeTool} ${payload.toolName}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: event.timestamp,
            attributes: {
              [ATTR.operationName]: OPERATION.executeTool,
              [ATTR.toolName]: payload.toolName,
              [ATTR.toolCallId]: payload.callId,
              [ATTR.toolType]: 'function',
              [ATTR.conversationId]: event.sessionId,
            },
          },
          turn.context,
        );
        if (this.#captureContent && span.isRecording()) {
          span.setAttribute(ATTR.toolCallArguments, safeJson(payload.arguments));
        }
        turn.tools.set(payload.callId, span);
        return;
      }
      case 'tool_call_end': {
        const turn = this.#turns.get(event.turnId);
        const span = turn?.tools.get(payload.callId);
        if (turn === undefined || span === undefined) return;
        turn.tools.delete(payload.callId);
        if (!payload.success) {
          span.setAttribute(ATTR.errorType, TOOL_FAILURE_TYPE);
          span.setStatus({ code: SpanStatusCode.ERROR, message: TOOL_FAILURE_TYPE });
        }
        if (this.#captureContent && span.isRecording()) {
          span.setAttribute(ATTR.toolCallResult, payload.output.content);
        }
        span.end(event.timestamp);
        return;
      }
      case 'context_compacted':
        this.#turns.get(event.turnId)?.span.addEvent('youyou.context_compacted', {}, event.timestamp);
        return;
      case 'error': {
        const turn = this.#turns.get(event.turnId);
        if (turn === undefined) return;
        turn.lastErrorCode = payload.error.code;
        turn.span.addEvent('youyou.error', { [ATTR.errorType]: payload.error.code }, event.timestamp);
        return;
      }
      default:
        return;
    }
  }

  #onChatStart(observation: Extract<Observation, { type: 'model_call_start' }>): void {
    const turn = observation.turnId === undefined ? undefined : this.#turns.get(observation.turnId);
    const { request } = observation;
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.chat,
      [ATTR.providerName]: observation.providerId,
      [ATTR.system]: observation.providerId,
      [ATTR.requestModel]: observation.modelId,
    };
    const span = this.#tracer.startSpan(
      `${OPERATION.chat} ${observation.modelId}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...attributes,
          [ATTR.conversationId]: observation.sessionId,
          [ATTR.purpose]: observation.purpose,
          ...(request.maxOutputTokens === undefined
            ? {}
            : { [ATTR.requestMaxTokens]: request.maxOutputTokens }),
          ...(request.temperature === undefined ? {} : { [ATTR.requestTemperature]: request.temperature }),
        },
      },
      turn?.context ?? context.active(),
    );
    if (this.#captureContent && span.isRecording()) {
      span.setAttribute(ATTR.systemInstructions, systemInstructionsJson(request));
      span.setAttribute(ATTR.inputMessages, inputMessagesJson(request.messages));
    }
    this.#chats.set(observation.callId, { span, startedAt: performance.now(), attributes });
  }

  #onChatEnd(observation: Extract<Observation, { type: 'model_call_end' }>): void {
    const chat = this.#chats.get(observation.callId);
    if (chat === undefined) return;
    this.#chats.delete(observation.callId);
    const { span } = chat;
    const metricAttributes: Attributes = { ...chat.attributes };
    span.setAttribute(ATTR.outcome, observation.outcome);
    if (observation.stopReason !== undefined)
      span.setAttribute(ATTR.responseFinishReasons, [observation.stopReason]);
    if (observation.responseModel !== undefined) {
      // The conventions put the answering model on the span and on both metrics alike.
      span.setAttribute(ATTR.responseModel, observation.responseModel);
      metricAttributes[ATTR.responseModel] = observation.responseModel;
    }
    const usage = observation.usage;
    if (usage !== undefined) {
      span.setAttribute(ATTR.inputTokens, usage.inputTokens);
      span.setAttribute(ATTR.outputTokens, usage.outputTokens);
      if (usage.cachedInputTokens !== undefined)
        span.setAttribute(ATTR.cacheReadInputTokens, usage.cachedInputTokens);
      const written = cacheWriteTokens(usage);
      if (written !== undefined) span.setAttribute(ATTR.cacheCreationInputTokens, written);
      if (usage.reasoningTokens !== undefined)
        span.setAttribute(ATTR.reasoningOutputTokens, usage.reasoningTokens);
      this.#tokenUsage.record(usage.inputTokens, { ...metricAttributes, [ATTR.tokenType]: 'input' });
      this.#tokenUsage.record(usage.outputTokens, { ...metricAttributes, [ATTR.tokenType]: 'output' });
    }
    if (observation.error !== undefined) {
      const code = observation.error.code;
      span.setAttribute(ATTR.errorType, code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: code });
      metricAttributes[ATTR.errorType] = code;
    }
    if (this.#captureContent && span.isRecording()) {
      const answer = {
        text: observation.outputText,
        toolCalls: observation.toolCalls,
        finishReason: observation.stopReason,
      };
      span.setAttribute(ATTR.outputMessages, outputMessagesJson(answer));
    }
    this.#duration.record((performance.now() - chat.startedAt) / 1000, metricAttributes);
    span.end();
  }
}

function tokenUsageHistogram(meter: Meter): Histogram {
  return meter.createHistogram(METRIC.tokenUsage, {
    description: 'Number of input and output tokens used per model call',
    unit: '{token}',
    advice: { explicitBucketBoundaries: [...METRIC.tokenBuckets] },
  });
}

function durationHistogram(meter: Meter): Histogram {
  return meter.createHistogram(METRIC.operationDuration, {
    description: 'Duration of each model call',
    unit: 's',
    advice: { explicitBucketBoundaries: [...METRIC.durationBuckets] },
  });
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return '"[unserialisable]"';
  }
}

/**
 * The OpenTelemetry plugin: registers it with `AgentBuilder.registerPlugin(createOtelPlugin())`. It traces every
 * turn (`invoke_agent`), model call (`chat`, whatever its purpose) and tool call (`execute_tool`) and records
 * the GenAI client metrics, through the global OpenTelemetry API unless providers are given. Without an SDK
 * registered, the API is a no-op and so is the plugin.
 */
export function createOtelPlugin(options: OtelPluginOptions = {}): Plugin {
  // One per agent the plugin is applied to.
  const applied = new Set<GenAiTelemetry>();
  return {
    id: 'otel',
    displayName: 'OpenTelemetry',
    description: 'Records traces and metrics of turns, model calls and tool calls.',
    initialize: async () => {},
    apply: (ctx: PluginContext) => {
      const telemetry = new GenAiTelemetry(options);
      applied.add(telemetry);
      ctx.observe(telemetry.observe, { enabled: telemetry.enabled });
    },
    shutdown: async () => {
      for (const telemetry of applied) telemetry.endAll();
      applied.clear();
    },
  };
}
