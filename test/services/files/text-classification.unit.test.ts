import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import {
  MARKDOWN_PREFIX_BYTES,
  TextClassifier,
  type TextType,
} from "../../../server/services/files/text-classifier.js";

/**
 * The streaming text rules on their own: each case is classified whole and again fed in tiny
 * chunks (1, 2, 3 and 7 bytes), which must never change the answer.
 */
const test = suite("text classification");

function classify(text: string | Buffer, chunk?: number): TextType {
  const bytes = typeof text === "string" ? Buffer.from(text) : text;
  const classifier = new TextClassifier();
  if (chunk === undefined) classifier.push(bytes);
  else for (let i = 0; i < bytes.length; i += chunk) classifier.push(bytes.subarray(i, i + chunk));
  return classifier.finish();
}

function expectEverywhere(text: string | Buffer, expected: TextType): void {
  for (const chunk of [undefined, 1, 2, 3, 7])
    assert.is(classify(text, chunk), expected, `chunks of ${chunk ?? "all"}: ${String(text).slice(0, 60)}`);
}

const cases: Array<[string, string | Buffer, TextType]> = [
  ["a JSON object", '{"a":[1,-2.5e+3,{"b":null,"c":true,"d":false}],"e":"\\u00e9\\n\\"x\\""}', "application/json"],
  ["a JSON array with whitespace around", "\n  [ 1 , 2 ]  \n", "application/json"],
  [
    "JSON after a byte order mark",
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]),
    "application/json",
  ],
  ["an unclosed array", "[1, 2", "text/plain"],
  ["a trailing comma", '{"a":1,}', "text/plain"],
  ["a leading zero", "[01]", "text/plain"],
  ["a bad escape", '["\\x"]', "text/plain"],
  ["a broken literal", "[tru]", "text/plain"],
  ["a bare number", "42", "text/plain"],
  ["a bare string", '"hello"', "text/plain"],
  ["nesting deeper than 512", `${"[".repeat(600)}${"]".repeat(600)}`, "text/plain"],
  ["two objects on one line", '{"a":1} {"b":2}', "text/plain"],
  ["NDJSON", '{"a":1}\n{"b":2}\n', "application/x-ndjson"],
  ["NDJSON with CRLF and blank lines", '{"a":1}\r\n\r\n["b"]\r\n', "application/x-ndjson"],
  ["NDJSON with a record over two lines", '{"a":1}\n{"b":\n2}\n', "text/plain"],
  ["NDJSON lines of numbers", "1\n2\n3\n", "text/plain"],
  [
    "CSV with quotes, an escaped quote and a line break inside a field",
    'a,b,c\n1,"x, ""y""",3\n2,"multi\nline",4\n',
    "text/csv",
  ],
  ["CSV without a final newline", "a,b\n1,2", "text/csv"],
  ["CSV with uneven rows", "a,b,c\n1,2\n", "text/plain"],
  ["one column", "a\nb\nc\n", "text/plain"],
  ["one record", "a,b,c\n", "text/plain"],
  ["a blank line inside a table", "a,b\n\n1,2\n", "text/plain"],
  ["a quote inside a plain field", 'a,b\nx"y,2\n', "text/plain"],
  ["an ATX heading", "# Title\n\nText.\n", "text/markdown"],
  ["a fenced code block", "Intro\n\n```js\nlet x;\n```\n", "text/markdown"],
  ["a table", "| a | b |\n|---|:-:|\n| 1 | 2 |\n", "text/markdown"],
  ["a setext heading", "Title\n=====\n\nText\n", "text/markdown"],
  ["a list and a link", "Items:\n- [docs](https://example.com/docs)\n- more\n", "text/markdown"],
  ["a link and strong text", "See [the docs](https://x.test/a) for **all** of it.\n", "text/markdown"],
  ["brackets and stars that pair with nothing", "f(a[1]) * 2 ** 3 and [x] (y)\n", "text/plain"],
  ["a list alone", "Shopping:\n- milk\n- bread\n", "text/plain"],
  ["prose", "It was a dark and stormy night; the rain fell in torrents.\n", "text/plain"],
  ["a 4-byte character", "emoji: 😀 done\n", "text/plain"],
];

for (const [name, text, expected] of cases) {
  test(`${name} → ${expected}`, () => expectEverywhere(text, expected));
}

/**
 * One long line built to make a backtracking pattern retry from every position (an unclosed
 * bracket, delimiter or pipe row that never completes), as long as the Markdown prefix so that the
 * character breaking a row is still inside it. The answers are what the Markdown rules say; the
 * sniffer reaches them in one pass over the line.
 */
const LONG = MARKDOWN_PREFIX_BYTES;
const worstCases: Array<[string, string, TextType]> = [
  ["unclosed link brackets", "[".repeat(LONG), "text/plain"],
  ["unclosed image brackets", "![".repeat(LONG / 2), "text/plain"],
  ["link texts whose target never closes", "[a](".repeat(LONG / 4), "text/plain"],
  ["strong openers that never close", "**a ".repeat(LONG / 4), "text/plain"],
  ["underscore openers that never close", "__a ".repeat(LONG / 4), "text/plain"],
  ["backticks (the line opens a code fence)", "`".repeat(LONG), "text/markdown"],
  ["one backtick and no closing one", `\`${"a".repeat(LONG - 1)}`, "text/plain"],
  ["a table delimiter row of single cells", "-|".repeat(LONG / 2), "text/markdown"],
  ["a delimiter row broken by a character after a run of blanks", `-|-${" ".repeat(LONG - 4)}x`, "text/plain"],
  ["a setext underline broken by a character after a run of blanks", `Title\n-${" ".repeat(LONG - 8)}x`, "text/plain"],
];

for (const [name, text, expected] of worstCases) {
  test(`${name}, ${LONG} bytes on one line → ${expected}`, () => assert.is(classify(text), expected));
}

test("invalid UTF-8 is refused wherever it is, whatever the chunking", () => {
  for (const bad of [
    Buffer.from([0x61, 0xc0, 0x80]),
    Buffer.from([0x61, 0xed, 0xa0, 0x80]),
    Buffer.from([0x61, 0xf8, 0x88, 0x80, 0x80, 0x80]),
    Buffer.from([0x61, 0x80]),
  ]) {
    for (const chunk of [undefined, 1, 2]) assert.throws(() => classify(bad, chunk), /not valid UTF-8/);
  }
});

test("content that ends inside a UTF-8 character is refused", () => {
  assert.throws(() => classify(Buffer.from([0x61, 0xf0, 0x9f, 0x98])), /ends inside a UTF-8 character/);
});

test("control characters other than tab, line breaks, form feed and escape are refused", () => {
  assert.is(classify("a\tb\fc\x1b[0m\r\n"), "text/plain");
  for (const control of ["\x00", "\x01", "\x08", "\x0b", "\x1f"])
    assert.throws(() => classify(`text${control}more`), /control character/);
});

test.run();
