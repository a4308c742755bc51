import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';

/** One question of an elicitation form, from one property of the server's `requestedSchema`. */
export type ElicitationField = {
  /** The key the answer goes under. */
  name: string;
  /** The server's `title`, else the key. Server text: neutralise it before showing it. */
  title: string;
  description?: string;
  required: boolean;
} & (
  | { type: 'string'; default?: string; format?: string; minLength?: number; maxLength?: number }
  | { type: 'number'; integer: boolean; default?: number; minimum?: number; maximum?: number }
  | { type: 'boolean'; default?: boolean }
  | { type: 'enum'; options: { value: string; label: string }[]; default?: string }
);

/** What a value of an accepted elicitation may be. */
export type ElicitationValue = string | number | boolean;

/** The user's answer: accept with the values (keys of the fields), decline the question, or cancel it. */
export type ElicitationAnswer =
  | { action: 'accept'; content: Record<string, ElicitationValue> }
  | { action: 'decline' }
  | { action: 'cancel' };

/** One `elicitation/create` of a server, as a host's handler gets it. */
export interface ElicitationRequest {
  /** The server's name in the config. */
  server: string;
  /** The server's question. Server text: neutralise it before showing it. */
  message: string;
  fields: ElicitationField[];
  /** The tool calls of this server running when the question came (the one that asks is among them). */
  callsInFlight: readonly McpCallInFlight[];
  /** Aborts when the server cancels the question or the connection goes away. */
  signal: AbortSignal;
}

/** A tool call that was running on the server. */
export interface McpCallInFlight {
  sessionId: string;
  turnId: string;
  callId: string;
  /** The runtime's name of the tool (`server__tool`). */
  toolName: string;
}

/**
 * Answers a server's question. Rejecting, or answering with values that do not fit the fields, sends
 * `decline`. Without a handler the client does not offer elicitation, and servers do not ask.
 */
export type ElicitationHandler = (request: ElicitationRequest) => Promise<ElicitationAnswer>;

type Property = Record<string, unknown>;

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function enumOptions(property: Property): { value: string; label: string }[] | undefined {
  if (Array.isArray(property.enum) && property.enum.every((value) => typeof value === 'string')) {
    const names = Array.isArray(property.enumNames) ? property.enumNames : [];
    return (property.enum as string[]).map((value, index) => {
      const label = names[index];
      return { value, label: typeof label === 'string' ? label : value };
    });
  }
  if (Array.isArray(property.oneOf)) {
    const options: { value: string; label: string }[] = [];
    for (const entry of property.oneOf as unknown[]) {
      const option = entry as Property;
      if (typeof option?.const !== 'string') return undefined;
      options.push({ value: option.const, label: optionalString(option.title) ?? option.const });
    }
    return options;
  }
  return undefined;
}

function withOptional<T extends object>(target: T, extra: Record<string, unknown>): T {
  for (const [key, value] of Object.entries(extra)) {
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
  return target;
}

function fieldOf(name: string, property: Property, required: boolean): ElicitationField | undefined {
  const base = withOptional(
    { name, title: optionalString(property.title) ?? name, required },
    { description: optionalString(property.description) },
  );
  const options = property.type === 'string' ? enumOptions(property) : undefined;
  if (options !== undefined) {
    return withOptional(
      { ...base, type: 'enum' as const, options },
      { default: optionalString(property.default) },
    );
  }
  switch (property.type) {
    case 'string':
      return withOptional(
        { ...base, type: 'string' as const },
        {
          default: optionalString(property.default),
          format: optionalString(property.format),
          minLength: optionalNumber(property.minLength),
          maxLength: optionalNumber(property.maxLength),
        },
      );
    case 'number':
    case 'integer':
      return withOptional(
        { ...base, type: 'number' as const, integer: property.type === 'integer' },
        {
          default: optionalNumber(property.default),
          minimum: optionalNumber(property.minimum),
          maximum: optionalNumber(property.maximum),
        },
      );
    case 'boolean':
      return withOptional(
        { ...base, type: 'boolean' as const },
        { default: typeof property.default === 'boolean' ? property.default : undefined },
      );
    default:
      return undefined;
  }
}

/**
 * The fields of a form's `requestedSchema`, in its order; undefined when a property is of a kind a
 * terminal cannot ask (a multi-select array, a nested object), so the whole question is declined.
 */
export function elicitationFields(requestedSchema: unknown): ElicitationField[] | undefined {
  if (typeof requestedSchema !== 'object' || requestedSchema === null) return undefined;
  const schema = requestedSchema as Property;
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  if (typeof properties !== 'object' || properties === null) return undefined;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as unknown[]) : []);
  const fields: ElicitationField[] = [];
  for (const [name, property] of Object.entries(properties)) {
    if (typeof property !== 'object' || property === null) return undefined;
    const field = fieldOf(name, property as Property, required.has(name));
    if (field === undefined) return undefined;
    fields.push(field);
  }
  return fields;
}

/** Why `value` does not fit `field`, or undefined when it does. */
export function fieldProblem(field: ElicitationField, value: ElicitationValue): string | undefined {
  switch (field.type) {
    case 'string': {
      if (typeof value !== 'string') return 'a text is needed';
      if (field.minLength !== undefined && value.length < field.minLength)
        return `at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && value.length > field.maxLength)
        return `at most ${field.maxLength} characters`;
      return undefined;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'a number is needed';
      if (field.integer && !Number.isInteger(value)) return 'a whole number is needed';
      if (field.minimum !== undefined && value < field.minimum) return `at least ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `at most ${field.maximum}`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'yes or no is needed';
    case 'enum':
      return field.options.some((option) => option.value === value) ? undefined : 'one of the choices';
  }
}

/** The answer as the protocol's result; an accept whose values do not fit the fields becomes decline. */
function toResult(fields: readonly ElicitationField[], answer: ElicitationAnswer): ElicitResult {
  if (answer.action !== 'accept') return { action: answer.action === 'cancel' ? 'cancel' : 'decline' };
  const content: Record<string, ElicitationValue> = {};
  for (const field of fields) {
    const value = answer.content[field.name];
    if (value === undefined) {
      if (field.required) return { action: 'decline' };
      continue;
    }
    if (fieldProblem(field, value) !== undefined) return { action: 'decline' };
    content[field.name] = value;
  }
  return { action: 'accept', content };
}

/** Answers one `elicitation/create` through the host's handler; every failure declines. */
export async function answerElicitation(options: {
  handler: ElicitationHandler;
  server: string;
  params: ElicitRequest['params'];
  callsInFlight: readonly McpCallInFlight[];
  signal: AbortSignal;
}): Promise<ElicitResult> {
  const { params } = options;
  // Only forms are offered; a URL question (open this page) is declined rather than shown.
  if (params.mode === 'url' || !('requestedSchema' in params)) return { action: 'decline' };
  const fields = elicitationFields(params.requestedSchema);
  if (fields === undefined) return { action: 'decline' };
  try {
    const answer = await options.handler({
      server: options.server,
      message: params.message,
      fields,
      callsInFlight: options.callsInFlight,
      signal: options.signal,
    });
    return toResult(fields, answer);
  } catch {
    return { action: 'decline' };
  }
}
