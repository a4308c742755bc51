/**
 * Telemetry of the CLI: on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set,
 * off otherwise. Only this module is loaded up front; the OpenTelemetry SDK and exporters are imported when
 * telemetry is on, so `--help` and runs without it never load them.
 */

// Types only: the module itself is imported when telemetry is on.
import type { Telemetry, TelemetryTargets } from './otel-export.js';

export type { Telemetry, TelemetryTargets } from './otel-export.js';

/** The signal's URL: its own variable as it is, else the base endpoint with the signal's path. */
function signalUrl(options: {
  own: string | undefined;
  base: string | undefined;
  path: string;
}): string | undefined {
  const own = options.own?.trim();
  if (own !== undefined && own !== '') return own;
  const base = options.base?.trim();
  if (base === undefined || base === '') return undefined;
  return `${base.replace(/\/+$/, '')}/${options.path}`;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * Reads the OpenTelemetry variables: undefined when telemetry is off (no endpoint, or OTEL_SDK_DISABLED=true).
 * A URL that is not http(s) is a warning and telemetry stays off: a typo must not stop the agent.
 */
export function telemetryTargets(options: {
  env: NodeJS.ProcessEnv;
  warn: (text: string) => void;
}): TelemetryTargets | undefined {
  const { env, warn } = options;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = signalUrl({ own: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, base, path: 'v1/traces' });
  if (tracesUrl === undefined) return undefined;
  const metricsUrl = signalUrl({ own: env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, base, path: 'v1/metrics' });
  for (const url of metricsUrl === undefined ? [tracesUrl] : [tracesUrl, metricsUrl]) {
    if (!isHttpUrl(url)) {
      warn(`telemetry is off: the OTLP endpoint '${url}' is not an http(s) URL`);
      return undefined;
    }
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim();
  return {
    tracesUrl,
    ...(metricsUrl === undefined ? {} : { metricsUrl }),
    serviceName: serviceName === undefined || serviceName === '' ? 'youyou' : serviceName,
    captureContent: env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === 'true',
  };
}

/** Starts telemetry when the environment asks for it; undefined otherwise (and nothing heavy is loaded). */
export async function startTelemetry(options: {
  env: NodeJS.ProcessEnv;
  warn: (text: string) => void;
}): Promise<Telemetry | undefined> {
  const targets = telemetryTargets(options);
  if (targets === undefined) return undefined;
  const { startOtlpTelemetry } = await import('./otel-export.js');
  return startOtlpTelemetry(targets);
}
