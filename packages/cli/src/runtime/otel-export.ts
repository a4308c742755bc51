/** The OpenTelemetry SDK of the CLI: traces and metrics over OTLP/HTTP (JSON). Imported only when telemetry is on. */

import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Plugin } from '@youyou/agent';
import { createOtelPlugin } from '@youyou/otel';
import { packageVersion } from './version.js';

/** Where the CLI sends its traces and metrics. */
export interface TelemetryTargets {
  tracesUrl: string;
  /** Unset when only a traces endpoint was given: then no metrics are sent. */
  metricsUrl?: string;
  /** `service.name` of the resource: `OTEL_SERVICE_NAME`, default `youyou`. */
  serviceName: string;
  /** Message contents are recorded only with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true. */
  captureContent: boolean;
}

/** The running telemetry: the plugin to register and the flush-and-stop to call at exit. */
export interface Telemetry {
  plugin: Plugin;
  /** Sends what is buffered and stops; bounded, never rejects. */
  shutdown(): Promise<void>;
}

/** How long the CLI waits at exit for the last spans and metrics to be sent: a dead collector must not hang it. */
const FLUSH_WITHIN_MS = 5_000;

/** Starts the tracer and meter providers with their OTLP/HTTP exporters and returns the plugin that feeds them. */
export function startOtlpTelemetry(targets: TelemetryTargets): Telemetry {
  const resource = resourceFromAttributes({
    'service.name': targets.serviceName,
    'service.version': packageVersion(),
  });
  const tracerProvider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: targets.tracesUrl }))],
  });
  const meterProvider = new MeterProvider({
    resource,
    readers:
      targets.metricsUrl === undefined
        ? []
        : [
            new PeriodicExportingMetricReader({
              exporter: new OTLPMetricExporter({ url: targets.metricsUrl }),
              // The last values are sent at exit in any case; a long session also sends them every minute.
              exportIntervalMillis: 60_000,
            }),
          ],
  });
  let stopping: Promise<void> | undefined;
  return {
    plugin: createOtelPlugin({ tracerProvider, meterProvider, captureContent: targets.captureContent }),
    shutdown: () => {
      stopping ??= (async () => {
        const stopped = Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]);
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, FLUSH_WITHIN_MS);
          timer.unref();
        });
        await Promise.race([stopped.then(() => undefined), late]);
        clearTimeout(timer);
      })();
      return stopping;
    },
  };
}
