import type { JsonSchema, ResponseFormat } from '@youyou/agent';

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isObjectSchema(schema: Json): boolean {
  const type = schema.type;
  return type === 'object' || (Array.isArray(type) && type.includes('object')) || isRecord(schema.properties);
}

/** The subschemas of one schema node, wherever JSON Schema puts them. */
function subschemas(schema: Json): unknown[] {
  const found: unknown[] = [];
  for (const key of ['properties', '$defs', 'definitions', 'patternProperties']) {
    const map = schema[key];
    if (isRecord(map)) found.push(...Object.values(map));
  }
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains']) {
    const value = schema[key];
    if (Array.isArray(value)) found.push(...value);
    else if (isRecord(value)) found.push(value);
  }
  for (const key of ['anyOf', 'allOf', 'oneOf', 'prefixItems']) {
    const list = schema[key];
    if (Array.isArray(list)) found.push(...list);
  }
  return found;
}

/**
 * True when OpenAI's strict mode accepts the schema: every object schema in it says
 * `additionalProperties: false` and lists all of its properties in `required`. OpenAI answers 400 to a
 * strict schema that breaks these rules, so such a schema is sent with `strict: false` (the runtime still
 * checks the answer against it).
 */
export function meetsStrictRules(schema: JsonSchema): boolean {
  const pending: unknown[] = [schema];
  const seen = new Set<unknown>();
  while (pending.length > 0) {
    const node = pending.pop();
    if (!isRecord(node) || seen.has(node)) continue;
    seen.add(node);
    if (isObjectSchema(node)) {
      if (node.additionalProperties !== false) return false;
      const properties = isRecord(node.properties) ? Object.keys(node.properties) : [];
      const required = Array.isArray(node.required) ? node.required : [];
      if (!properties.every((name) => required.includes(name))) return false;
    }
    pending.push(...subschemas(node));
  }
  return true;
}

/** Whether to ask OpenAI for strict enforcement: wanted by the request (default yes) and allowed by the schema. */
function strictFor(format: ResponseFormat): boolean {
  return (format.strict ?? true) && meetsStrictRules(format.schema);
}

/** Chat Completions' `response_format` for a request's ResponseFormat. */
export function chatResponseFormat(format: ResponseFormat) {
  return {
    type: 'json_schema' as const,
    json_schema: {
      name: format.name,
      ...(format.description === undefined ? {} : { description: format.description }),
      schema: format.schema,
      strict: strictFor(format),
    },
  };
}

/** Responses' `text` parameter for a request's ResponseFormat. */
export function responsesTextFormat(format: ResponseFormat) {
  return {
    format: {
      type: 'json_schema' as const,
      name: format.name,
      ...(format.description === undefined ? {} : { description: format.description }),
      schema: format.schema,
      strict: strictFor(format),
    },
  };
}
