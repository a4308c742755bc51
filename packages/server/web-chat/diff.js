// A line diff for the approval card: what a write_file or edit_file call would change, as unified-diff lines.

const CONTEXT_LINES = 3;
// Above this many cells the longest-common-subsequence table costs too much: the change is shown whole.
const MAX_CELLS = 4_000_000;

const splitLines = (text) => {
  if (text === '') return [];
  const lines = String(text).split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
};

/** The edit script from `before` to `after` as `{ kind: 'same' | 'del' | 'add', text }` rows. */
function editScript(before, after) {
  if (before.length * after.length > MAX_CELLS) {
    return [
      ...before.map((text) => ({ kind: 'del', text })),
      ...after.map((text) => ({ kind: 'add', text })),
    ];
  }
  const width = after.length + 1;
  const common = new Uint32Array((before.length + 1) * width);
  for (let i = before.length - 1; i >= 0; i--) {
    for (let j = after.length - 1; j >= 0; j--) {
      common[i * width + j] =
        before[i] === after[j]
          ? common[(i + 1) * width + j + 1] + 1
          : Math.max(common[(i + 1) * width + j], common[i * width + j + 1]);
    }
  }
  const rows = [];
  let i = 0;
  let j = 0;
  while (i < before.length || j < after.length) {
    if (i < before.length && j < after.length && before[i] === after[j]) {
      rows.push({ kind: 'same', text: before[i], oldLine: i + 1, newLine: j + 1 });
      i++;
      j++;
    } else if (
      i < before.length &&
      (j >= after.length || common[(i + 1) * width + j] >= common[i * width + j + 1])
    ) {
      // Removed lines come before the lines that replace them, as in `diff -u`.
      rows.push({ kind: 'del', text: before[i], oldLine: i + 1 });
      i++;
    } else {
      rows.push({ kind: 'add', text: after[j], newLine: j + 1 });
      j++;
    }
  }
  return rows;
}

/**
 * The unified diff of `before` → `after`: `{ kind: 'hunk' | 'same' | 'del' | 'add', text }` lines, changes with
 * three lines of context, each group of changes under its `@@ -a,b +c,d @@` header.
 */
export function unifiedDiff(before, after) {
  const rows = editScript(splitLines(before), splitLines(after));
  const changed = rows.map((row) => row.kind !== 'same');
  const keep = rows.map((_row, index) => {
    for (
      let k = Math.max(0, index - CONTEXT_LINES);
      k <= Math.min(rows.length - 1, index + CONTEXT_LINES);
      k++
    ) {
      if (changed[k]) return true;
    }
    return false;
  });
  const lines = [];
  let oldLine = 1;
  let newLine = 1;
  for (let index = 0; index < rows.length; ) {
    if (!keep[index]) {
      if (rows[index].kind !== 'add') oldLine++;
      if (rows[index].kind !== 'del') newLine++;
      index++;
      continue;
    }
    const start = index;
    while (index < rows.length && keep[index]) index++;
    const hunk = rows.slice(start, index);
    const oldCount = hunk.filter((row) => row.kind !== 'add').length;
    const newCount = hunk.filter((row) => row.kind !== 'del').length;
    lines.push({
      kind: 'hunk',
      text: `@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`,
    });
    for (const row of hunk) lines.push({ kind: row.kind, text: row.text });
    oldLine += oldCount;
    newLine += newCount;
  }
  return lines;
}
