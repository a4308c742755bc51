/** The longest tool name model APIs accept (and the runtime's TOOL_NAME_PATTERN allows). */
export const MAX_TOOL_NAME_LENGTH = 64;

/** Between the server name and the tool name. */
export const NAME_SEPARATOR = '__';

/**
 * The runtime names of one server's tools, in the order given: `${server}__${tool}` with every character
 * outside `a-z A-Z 0-9 _ -` replaced by `_`, cut to 64 characters. When two names come out the same
 * (`a.b` and `a_b`, or two long names sharing their first 64 characters), the first keeps it and each later
 * one gets the lowest free suffix `_2`, `_3`, … (the name cut shorter to make room).
 *
 * Names of different servers cannot collide: a server name has no `__` and does not end in `_`, so the
 * first `__` of a prefixed name always ends the server's name.
 */
export function prefixedToolNames(serverName: string, toolNames: readonly string[]): string[] {
  const taken = new Set<string>();
  return toolNames.map((toolName) => {
    const base = `${serverName}${NAME_SEPARATOR}${toolName.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
    let candidate = base.slice(0, MAX_TOOL_NAME_LENGTH);
    for (let counter = 2; taken.has(candidate); counter += 1) {
      const suffix = `_${counter}`;
      candidate = base.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
    }
    taken.add(candidate);
    return candidate;
  });
}
