/** True for an object that is not an array: a JSON object, as the API's `input` fields and schemas are. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
