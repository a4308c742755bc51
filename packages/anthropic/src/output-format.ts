import type Anthropic from '@anthropic-ai/sdk';
import type { ChatEvent, ChatRequest, JsonSchema } from '@youyou/agent';
import { isRecord } from './json-value.js';

/**
 * How a request's `responseFormat` is put to the Messages API: `native` as `output_config.format` (Claude
 * 4.5 and later), or `tool`: a final tool whose input is the answer, whose call is turned back into text.
 */
export type OutputRoute = { kind: 'native' } | { kind: 'tool'; toolName: string };

/**
 * True when every object schema in `schema` says `additionalProperties: false`, which Anthropic's JSON
 * outputs require; a schema that leaves an object open goes by the forced tool instead of a 400.
 */
export function closesEveryObject(schema: JsonSchema): boolean {
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) {
      pending.push(...node);
      continue;
    }
    if (!isRecord(node)) continue;
    const isObject =
      node.type === 'object' ||
      (Array.isArray(node.type) && node.type.includes('object')) ||
      isRecord(node.properties);
    if (isObject && node.additionalProperties !== false) return false;
    for (const key of ['properties', '$defs', 'definitions']) {
      if (isRecord(node[key])) pending.push(...Object.values(node[key]));
    }
    for (const key of ['items', 'prefixItems', 'anyOf', 'allOf', 'oneOf', 'additionalProperties', 'not']) {
      pending.push(node[key]);
    }
  }
  return true;
}

/** A tool name no registered tool has: the format's name, suffixed when a tool already bears it. */
function freeToolName(request: ChatRequest, name: string): string {
  const taken = new Set(request.tools.map((tool) => tool.name));
  let candidate = name;
  for (let index = 2; taken.has(candidate); index += 1) candidate = `${name}_${index}`;
  return candidate;
}

/** Decides how the format is sent; undefined when the request asks for none. */
export function outputRoute(request: ChatRequest, nativeSupport: boolean): OutputRoute | undefined {
  const format = request.responseFormat;
  if (format === undefined) return undefined;
  if (nativeSupport && closesEveryObject(format.schema)) return { kind: 'native' };
  return { kind: 'tool', toolName: freeToolName(request, format.name) };
}

/**
 * Adds the format to the request parameters. The forced tool is required (`tool_choice: any`: the model
 * must call a tool, its own or this one) unless thinking is on, which the API allows only with `auto`.
 */
export function applyOutputRoute(options: {
  params: Anthropic.MessageCreateParamsStreaming;
  request: ChatRequest;
  route: OutputRoute;
  thinking: boolean;
}): void {
  const { params, request, route } = options;
  const format = request.responseFormat;
  if (format === undefined) return;
  if (route.kind === 'native') {
    params.output_config = {
      ...params.output_config,
      format: { type: 'json_schema', schema: format.schema },
    };
    return;
  }
  const description =
    format.description ?? 'Gives the final answer of this turn, once no other tool is needed.';
  params.tools = [
    ...(params.tools ?? []),
    {
      name: route.toolName,
      description: `${description} Call it exactly once, as your last step; its input is the answer.`,
      input_schema: format.schema as Anthropic.Tool.InputSchema,
    },
  ];
  params.tool_choice = options.thinking ? { type: 'auto' } : { type: 'any' };
}

/**
 * Turns the forced tool's call back into the answer's text, so that the runtime sees the JSON as it sees a
 * native structured answer; a stop for it alone is the end of the turn, not a tool round.
 */
export async function* answerFromOutputTool(
  events: AsyncIterable<ChatEvent>,
  toolName: string,
): AsyncGenerator<ChatEvent, void, undefined> {
  let otherCalls = 0;
  for await (const event of events) {
    if (event.type === 'tool_call') {
      if (event.toolName === toolName) {
        yield { type: 'text_delta', text: event.arguments };
        continue;
      }
      otherCalls += 1;
    }
    if (event.type === 'done' && event.stopReason === 'tool_use' && otherCalls === 0) {
      yield { ...event, stopReason: 'end_turn' };
      continue;
    }
    yield event;
  }
}
