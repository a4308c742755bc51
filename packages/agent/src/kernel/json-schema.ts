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
 * accepted (strict off, formats not checked) rather than failing the build.
 */
const AJV_OPTIONS: Options = { strict: false, allErrors: true, validateFormats: false, logger: false };

type Draft = 'draft-07' | '2019-09' | '2020-12';

function createAjv(draft: Draft, options: Options): Ajv {
  if (draft === '2020-12') return new Ajv2020(options);
  if (draft === '2019-09') return new Ajv2019(options);
  return new Ajv(options);
}

/**
 * Checking a schema against its meta-schema needs the meta-schema compiled, which costs milliseconds, so it
 * is done by one instance per draft for the whole process; checking registers nothing, so they never grow.
 */
const metaCheckers = new Map<Draft, Ajv>();

function checkAgainstMetaSchema(draft: Draft, schema: JsonSchema): void {
  let checker = metaCheckers.get(draft);
  if (checker === undefined) {
    checker = createAjv(draft, AJV_OPTIONS);
    metaCheckers.set(draft, checker);
  }
  if (!checker.validateSchema(schema)) {
    throw new Error(`schema is invalid: ${checker.errorsText(checker.errors, { dataVar: 'schema' })}`);
  }
}

function draftOf(schema: JsonSchema): Draft {
  const declared = schema.$schema;
  if (typeof declared !== 'string') return 'draft-07';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/**
 * Compiles the parameter schemas of one set of tools. Each compiler has its own ajv instances (made on first
 * use, without the costly meta-schema), so the compiled schemas live as long as the validators, and the
 * `$id`s of one agent's tools never meet another agent's.
 */
export class SchemaCompiler {
  readonly #instances = new Map<Draft, Ajv>();

  /**
   * Compiles a tool's parameter schema; throws a plain Error saying why when it cannot be compiled.
   * Draft 2019-09 and 2020-12 schemas (by `$schema`) get the matching validator; any other `$schema`
   * (draft-04/06/07, which tool schemas rarely depend on) is checked as draft-07.
   */
  compile(schema: JsonSchema, subject = 'arguments'): SchemaCheck {
    const draft = draftOf(schema);
    // draft-07's Ajv rejects a `$schema` it has no meta-schema for, so a draft-04/06 marker is dropped.
    const source = draft === 'draft-07' && '$schema' in schema ? withoutSchemaKeyword(schema) : schema;
    checkAgainstMetaSchema(draft, source);
    let ajv = this.#instances.get(draft);
    if (ajv === undefined) {
      ajv = createAjv(draft, { ...AJV_OPTIONS, validateSchema: false });
      this.#instances.set(draft, ajv);
    }
    let validate: ValidateFunction;
    try {
      validate = ajv.compile(source);
    } finally {
      // Frees the schema's `$id` so that two tools may share one, and keeps a schema that failed to compile
      // from being served, uncompiled, from ajv's cache.
      ajv.removeSchema(source);
    }
    return (value) => (validate(value) ? undefined : describeErrors(validate.errors, subject));
  }
}

function withoutSchemaKeyword(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** `arguments/path must be string; arguments must have required property 'name'` (`subject` names the value). */
function describeErrors(errors: ErrorObject[] | null | undefined, subject: string): string {
  if (!errors || errors.length === 0) return `${subject} does not match the schema`;
  const parts: string[] = [];
  for (const error of errors.slice(0, MAX_LISTED_ERRORS)) {
    let part = `${subject}${error.instancePath} ${error.message ?? 'is invalid'}`;
    const extra = (error.params as { additionalProperty?: unknown }).additionalProperty;
    if (typeof extra === 'string') part += ` ('${extra}')`;
    parts.push(part);
  }
  if (errors.length > MAX_LISTED_ERRORS) parts.push(`and ${errors.length - MAX_LISTED_ERRORS} more`);
  return parts.join('; ');
}
