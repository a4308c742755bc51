/** `count` with its noun in the right number: `1 line`, `2 lines`, `0 memories` (`plural` when not noun+s). */
export function countOf(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
