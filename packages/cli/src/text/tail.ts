/** The last `limit` UTF-16 units of `text`, never starting with the lone low half of a surrogate pair. */
export function lastChars(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const kept = text.slice(-limit);
  return /^[\uDC00-\uDFFF]/.test(kept) ? kept.slice(1) : kept;
}
