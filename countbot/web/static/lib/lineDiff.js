// A line diff (longest common subsequence) for showing two versions of a text side by side.

const MAX_CELLS = 4_000_000; // beyond this the table would cost too much; show both texts whole

/**
 * [{kind: "same" | "removed" | "added", text}] turning `before` into `after`, or null when the
 * texts are too long to compare line by line.
 */
export function lineDiff(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  if (a.length * b.length > MAX_CELLS) return null;
  // lengths[i][j]: the common subsequence length of a[i:] and b[j:].
  const lengths = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lengths[i][j] =
        a[i] === b[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
    }
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ kind: "same", text: a[i] });
      i += 1;
      j += 1;
    } else if (j < b.length && (i === a.length || lengths[i][j + 1] >= lengths[i + 1][j])) {
      lines.push({ kind: "added", text: b[j] });
      j += 1;
    } else {
      lines.push({ kind: "removed", text: a[i] });
      i += 1;
    }
  }
  return lines;
}
