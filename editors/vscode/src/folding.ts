// Folding ranges for .coll text, computed without the language server: one range per `{ ... }`,
// `[ ... ]` or `( ... )` that spans lines, and one per run of two or more `//` comment lines.
// Brackets inside strings and comments are ignored. Kept free of the `vscode` module so that it
// can be unit-tested under plain Node (tests/folding.test.ts).

export interface Fold {
  /** First line (0-based), the line of the opening bracket or the first comment line. */
  start: number;
  /** Last line to hide: the line before the closing bracket, or the last comment line. */
  end: number;
  comment: boolean;
}

export function foldingRanges(text: string): Fold[] {
  const folds: Fold[] = [];
  const stack: number[] = [];
  const lines = text.split(/\r?\n/);
  let commentStart = -1;
  let commentEnd = -1;
  const flushComments = () => {
    if (commentStart >= 0 && commentEnd > commentStart) {
      folds.push({ start: commentStart, end: commentEnd, comment: true });
    }
    commentStart = -1;
  };
  lines.forEach((line, lineNo) => {
    if (/^\s*\/\//.test(line)) {
      if (commentStart < 0) commentStart = lineNo;
      commentEnd = lineNo;
      return;
    }
    flushComments();
    let inString = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (inString) {
        if (ch === "\\") i++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === "/" && line[i + 1] === "/") break;
      else if (ch === "{" || ch === "[" || ch === "(") stack.push(lineNo);
      else if (ch === "}" || ch === "]" || ch === ")") {
        const open = stack.pop();
        if (open !== undefined && lineNo - 1 > open) {
          folds.push({ start: open, end: lineNo - 1, comment: false });
        }
      }
    }
  });
  flushComments();
  folds.sort((a, b) => a.start - b.start || b.end - a.end);
  return folds;
}
