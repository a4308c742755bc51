/** Past this many entries, `OpenCalls` keeps them in a Map: its linear search would grow with the square. */
const ARRAY_LIMIT = 32;

/**
 * The tool calls of a log still waiting for their result, in call order, as a Map keyed by call id would keep
 * them (setting a known id keeps its place). A log's replay opens and answers a call per tool step: a Map's
 * delete allocates a new hash table each time it empties, so the few calls of a batch are kept in two arrays
 * that are reused, and only a batch of more than 32 calls open at once moves to a Map.
 */
export class OpenCalls<T> {
  readonly #ids: string[] = [];
  readonly #values: (T | undefined)[] = [];
  #size = 0;
  #map: Map<string, T> | undefined;

  /** How many calls are open. */
  get size(): number {
    return this.#map?.size ?? this.#size;
  }

  /** Opens a call, or replaces the value of one already open (it keeps its place). */
  set(callId: string, value: T): void {
    if (this.#map !== undefined) {
      this.#map.set(callId, value);
      return;
    }
    const index = this.#indexOf(callId);
    if (index >= 0) {
      this.#values[index] = value;
    } else if (this.#size < ARRAY_LIMIT) {
      this.#ids[this.#size] = callId;
      this.#values[this.#size] = value;
      this.#size += 1;
    } else {
      const map = new Map<string, T>();
      for (let at = 0; at < this.#size; at++) map.set(this.#ids[at] as string, this.#values[at] as T);
      map.set(callId, value);
      this.#map = map;
    }
  }

  /** Closes a call; an id not open is ignored. */
  delete(callId: string): void {
    if (this.#map !== undefined) {
      this.#map.delete(callId);
      return;
    }
    const index = this.#indexOf(callId);
    if (index < 0) return;
    const last = this.#size - 1;
    for (let at = index; at < last; at++) {
      this.#ids[at] = this.#ids[at + 1] as string;
      this.#values[at] = this.#values[at + 1];
    }
    this.#values[last] = undefined;
    this.#size = last;
  }

  /** Closes every call. */
  clear(): void {
    this.#map = undefined;
    this.#values.fill(undefined, 0, this.#size);
    this.#size = 0;
  }

  /** The open calls' values, in call order. */
  values(): T[] {
    if (this.#map !== undefined) return [...this.#map.values()];
    return this.#values.slice(0, this.#size) as T[];
  }

  #indexOf(callId: string): number {
    for (let index = 0; index < this.#size; index++) if (this.#ids[index] === callId) return index;
    return -1;
  }
}
