/** How the runtime describes and recognises values it did not make (a host's config, a provider's events). */

/** What a value is, for an error message: `null`, `an array`, `a number (42)`, … */
export function describeKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return value.trim() === '' ? 'a blank string' : 'a string';
    case 'number':
    case 'boolean':
    case 'bigint':
      return `a ${typeof value} (${String(value)})`;
    case 'undefined':
      return 'nothing';
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default:
      return 'an object';
  }
}

/** True for `{...}` made by an object literal, JSON.parse or Object.create(null): not an array, class or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `JSON.stringify(value)`, or undefined where JSON has no text for it (undefined, a function, a cycle, a BigInt). */
export function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** The JSON text of `value`, or `String(value)` where JSON has none: any value as text, for a message. */
export function jsonOrString(value: unknown): string {
  return jsonText(value) ?? String(value);
}

/** An id from outside (a caller's, a log's) as an error message shows it: quoted, escaped, cut to 80 characters. */
export function shownId(id: string): string {
  return JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id);
}
