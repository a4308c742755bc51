/**
 * @youyou/otel — OpenTelemetry traces and metrics of YouYou Agent in the GenAI semantic conventions:
 * `invoke_agent` per turn, `chat` per model call, `execute_tool` per tool call, and the
 * `gen_ai.client.token.usage` / `gen_ai.client.operation.duration` histograms.
 */
export { ATTR, METRIC, OPERATION, TOOL_FAILURE_TYPE } from './conventions.js';
export { createOtelPlugin, type OtelPluginOptions } from './plugin.js';
