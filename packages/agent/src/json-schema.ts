import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from './types.js';

/** A compiled check of one schema: undefined when the value matches, else what failed, for the model to read. */
export type SchemaCheck = (value: unknown) => string | undefined;

/** How many failures a message lists; a badly wrong call does not need fifty lines to be understood. */
const MAX_LISTED_ERRORS = 8;

/**
 * Tool schemas come from hosts and MCP servers that use keywords and formats ajv does not know: they are
 * accepted (strict off, formats not checked) rather than failing the build. `addUsedSchema: false` keeps
 * a schema's `$id` out of the shared instance, so two tools may reuse one `$id`.
 */
const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  addUsedSchema: false,
  logger: false,
};

type Draft = 'draft-07' | '2019-09' | '2020-12';

/** One instance per draft, made on first use: building an Ajv compiles its meta-schema, which costs milliseconds. */
const instances = new Map<Draft, Ajv>();

function instanceFor(draft: Draft): Ajv {
  let instance = instances.get(draft);
  if (instance === undefined) {
    if (draft === '2020-12') instance = new Ajv2020(AJV_OPTIONS);
    else if (draft === '2019-09') instance = new Ajv2019(AJV_OPTIONS);
    else instance = new Ajv(AJV_OPTIONS);
    instances.set(draft, instance);
  }
  return instance;
}

function draftOf(schema: JsonSchema): Draft {
  const declared = schema.$schema;
  if (typeof declared !== 'string') return 'draft-07';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/** True for `{...}` made by a literal, `JSON.parse` or `Object.create(null)`: not an array, a class instance or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Compiles a tool's parameter schema; throws a plain Error saying why when it cannot be compiled.
 * Draft 2019-09 and 2020-12 schemas (by `$schema`) get the matching validator; any other `$schema`
 * (draft-04/06/07, which tool schemas rarely depend on) is checked as draft-07.
 */
export function compileSchema(schema: JsonSchema): SchemaCheck {
  const draft = draftOf(schema);
  const ajv = instanceFor(draft);
  // draft-07's Ajv rejects a `$schema` it has no meta-schema for, so a draft-04/06 marker is dropped.
  const source = draft === 'draft-07' && '$schema' in schema ? withoutSchemaKeyword(schema) : schema;
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(source);
  } finally {
    // Ajv caches by schema object for as long as the instance lives; the shared instance must not keep every
    // schema of every agent ever built, and a schema that failed to compile must not be served from that cache.
    ajv.removeSchema(source);
  }
  return (value) => (validate(value) ? undefined : describeErrors(validate.errors));
}

function withoutSchemaKeyword(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** `arguments/path must be string; arguments must have required property 'name'`. */
function describeErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'arguments do not match the schema';
  const parts: string[] = [];
  for (const error of errors.slice(0, MAX_LISTED_ERRORS)) {
    let part = `arguments${error.instancePath} ${error.message ?? 'is invalid'}`;
    const extra = (error.params as { additionalProperty?: unknown }).additionalProperty;
    if (typeof extra === 'string') part += ` ('${extra}')`;
    parts.push(part);
  }
  if (errors.length > MAX_LISTED_ERRORS) parts.push(`and ${errors.length - MAX_LISTED_ERRORS} more`);
  return parts.join('; ');
}
