/**
 * Whether a text prefix reads as Markdown: an ATX heading, a fenced code block, a table delimiter
 * row or a setext underline, or at least two different kinds of lighter markup among list items,
 * block quotes, links/images, `**strong**` and `` `code` ``.
 *
 * The prefix is an uploader's content, so every check runs in time linear in its length: the
 * anchored patterns start only at line starts and never try two ways to split one run of
 * characters, and the two inline constructs whose regular expressions would rescan the rest of the
 * line from every opening bracket or delimiter (links, strong emphasis) are small scanners instead.
 */
export function looksLikeMarkdown(text: string): boolean {
  if (STRONG_MARKDOWN.some((pattern) => pattern.test(text))) return true;
  return LIGHT_MARKDOWN.filter((matches) => matches(text)).length >= 2;
}

const STRONG_MARKDOWN = [
  /^#{1,6}[ \t]+\S/m,
  /^ {0,3}(```|~~~)/m,
  // A trailing pipe takes its own blanks: a second `[ \t]*` right after the last cell's would let
  // a long run of blanks before a stray character be split every possible way.
  /^\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)+(\|[ \t]*)?$/m,
  /^[^\s].*\r?\n(=+|-+)[ \t]*\r?$/m,
];

const LIGHT_MARKDOWN: Array<(text: string) => boolean> = [
  (text) => /^[ \t]{0,3}([-*+]|\d{1,9}[.)])[ \t]+\S/m.test(text),
  (text) => /^ {0,3}>[ \t]?\S/m.test(text),
  hasLink,
  hasStrong,
  // Each start scans only up to the next backtick, where the next start begins: linear as it is.
  (text) => /`[^`\n]+`/.test(text),
];

const SPACE = /\s/;

/**
 * `[text](target)` or `![alt](src)` on one line: link text without `]`, a target without blanks or
 * `)`, neither empty. One pass, remembering the first `[` since the last `]` and how far a target
 * scan already failed, so no character is looked at more than twice.
 */
function hasLink(text: string): boolean {
  let open = -1;
  // A target scan that stopped at a blank or a line end fails the same way from anywhere before it.
  let failedUpTo = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\n") open = -1;
    else if (c === "[" && open < 0) open = i;
    else if (c === "]") {
      if (open >= 0 && i - open >= 2 && text[i + 1] === "(" && i + 2 > failedUpTo) {
        let end = i + 2;
        while (end < text.length && text[end] !== ")" && !SPACE.test(text[end]!)) end++;
        if (end > i + 2 && text[end] === ")") return true;
        failedUpTo = end;
      }
      open = -1;
    }
  }
  return false;
}

/**
 * `**strong**` or `__strong__` on one line: the opening delimiter followed by a non-blank, the
 * closing one preceded by a non-blank, at least one character between those two. The earliest
 * opener on the line is the one any closer is most likely to pair with, so only it is kept.
 */
function hasStrong(text: string): boolean {
  const opener = { "*": -1, _: -1 };
  for (let i = 0; i + 1 < text.length; i++) {
    const c = text[i];
    if (c === "\n") {
      opener["*"] = -1;
      opener._ = -1;
    } else if ((c === "*" || c === "_") && text[i + 1] === c) {
      const from = opener[c];
      if (from >= 0 && i - from >= 4 && !SPACE.test(text[i - 1]!)) return true;
      if (from < 0 && i + 2 < text.length && !SPACE.test(text[i + 2]!)) opener[c] = i;
    }
  }
  return false;
}
