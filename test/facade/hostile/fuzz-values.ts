import { ScalarType, type DescField } from "@bufbuild/protobuf";
import { deepArray, deepObject, RawJson, type FuzzJson } from "./fuzz-json.js";
import { enumWires, isInteger, rulesOf } from "./fuzz-shapes.js";

/**
 * Hostile values by field type, each with a label for failure messages. `must` values are sent
 * for every field of the type; the seeded sample adds a few of the `rest`. A value a route accepts
 * must read back as sent, so legal but unusual text is here as well as what must be refused.
 */
export type Labeled<T> = [label: string, value: T];

export interface Pool<T> {
  must: Labeled<T>[];
  rest: Labeled<T>[];
}

const DEEP = 10_000;
const raw = (text: string) => new RawJson(text);

/** Legal text that storage, escaping or encoding layers tend to change. */
export const ODD_TEXT: Labeled<string>[] = [
  ["control characters", "tab\t nl\n cr\r bell\u0007 esc\u001b del\u007f"],
  ["astral, combining and bidi characters", "😀 e\u0301 \u202eltr\u202c \ufeffbom"],
  ["quotes and escape sequences", `q" b\\ \\0 \\u0000 %00 %zz`],
  ["line and paragraph separators", "a\u2028b\u2029c"],
  ["surrounding spaces", "  padded  "],
  ["markup", "<b>&amp;</b><script>x</script>"],
  ["quote-heavy", "' OR '1'='1' -- ;"],
];

export function stringPool(field: DescField, hugeBytes: number): Pool<FuzzJson> {
  const rules = rulesOf(field);
  const max = rules?.maxLen;
  return {
    must: [
      ["NUL", "a\u0000b"],
      ["lone surrogate", "x\ud800"],
    ],
    rest: [
      ["number", 12345],
      ["boolean", true],
      ["object", {}],
      ["array", ["x"]],
      ["empty", ""],
      ...ODD_TEXT,
      ...(max !== undefined && max <= 100_000
        ? ([
            ["at max length", "m".repeat(max)],
            ["over max length", "m".repeat(max + 1)],
            ["max length in 4-byte characters", "😀".repeat(max)],
          ] as Labeled<FuzzJson>[])
        : []),
      ["huge", "h".repeat(hugeBytes)],
    ],
  };
}

const INTEGER: Pool<FuzzJson> = {
  must: [
    ["1e400", raw("1e400")],
    ["2^64", raw("18446744073709551616")],
  ],
  rest: [
    ["2^31", 2147483648],
    ["-2^31-1", -2147483649],
    ["2^32", 4294967296],
    ["2^53+1", raw("9007199254740993")],
    ["-1e400", raw("-1e400")],
    ["-1", -1],
    ["-0", raw("-0")],
    ["0", 0],
    ["fraction", 1.5],
    ["'NaN'", "NaN"],
    ["'Infinity'", "Infinity"],
    ["hex string", "0x10"],
    ["exponent string", "1e3"],
    ["empty string", ""],
    ["int64 max string", "9223372036854775807"],
    ["boolean", true],
    ["object", {}],
  ],
};

const DOUBLE: Pool<FuzzJson> = {
  must: [
    ["1e400", raw("1e400")],
    ["'NaN'", "NaN"],
  ],
  rest: [
    ["-1e400", raw("-1e400")],
    ["'Infinity'", "Infinity"],
    ["'-Infinity'", "-Infinity"],
    ["-0", raw("-0")],
    ["1e308", raw("1e308")],
    ["smallest denormal", raw("5e-324")],
    ["-1", -1],
    ["numeric string", "1"],
    ["boolean", true],
  ],
};

const BOOL: Pool<FuzzJson> = {
  must: [["string 'true'", "true"]],
  rest: [
    ["number", 1],
    ["word", "yes"],
    ["object", {}],
    ["array", [true]],
  ],
};

function enumPool(field: DescField): Pool<FuzzJson> {
  const wires = enumWires(field);
  const first = wires[0] ?? "x";
  return {
    must: [
      ["unknown value", "no_such_value"],
      ["NUL", `${first}\u0000`],
    ],
    rest: [
      ...wires.slice(0, 3).map((w): Labeled<FuzzJson> => [`'${w}'`, w]),
      ["empty", ""],
      ["number", 1],
      ["upper-cased", first.toUpperCase()],
      ["lone surrogate", "\udc00"],
    ],
  };
}

export const STRUCT_POOL: Pool<FuzzJson> = {
  must: [
    ["NUL in a nested value", { k: { deep: ["ok", "a\u0000"] } }],
    ["NUL in a key", { "a\u0000b": 1 }],
    ["1e400 nested", { k: { n: raw("1e400") } }],
    ["10,000 levels", { k: deepArray(DEEP) }],
  ],
  rest: [
    ["string", "x"],
    ["array", [1]],
    ["lone surrogate key", { "\udc00": 1 }],
    ["lone surrogate value", { k: "\ud800" }],
    ["-1e400 in a list", { k: [raw("-1e400")] }],
    ["10,000 nested objects", { k: deepObject(DEEP) }],
    [
      "legal odd keys and values",
      {
        "emoji 😀": "tab\t",
        "": "",
        ["__proto__"]: { x: 1 },
        constructor: "c",
        nested: { list: [1, -0.5, true, null, "s"] },
      },
    ],
    ["-0", { z: raw("-0") }],
  ],
};

const VALUE: Pool<FuzzJson> = {
  must: [
    ["1e400", raw("1e400")],
    ["NUL", "a\u0000"],
    ["10,000 levels", deepArray(DEEP)],
  ],
  rest: [
    ["1e400 in a list", ["a", raw("1e400")]],
    ["NUL key", { "a\u0000": 1 }],
    ["lone surrogate", "\ud800"],
    ["text", "hello 😀"],
    ["list", ["a", "b"]],
    ["content parts", [{ type: "text", text: "hi" }]],
    ["object", { type: "text", text: "hi" }],
    ["number", 5],
    ["boolean", true],
  ],
};

const TIMESTAMP: Pool<FuzzJson> = {
  must: [["not a date", "yesterday"]],
  rest: [
    ["impossible date", "2030-13-45T25:61:61Z"],
    ["year 9999", "9999-12-31T23:59:59Z"],
    ["year 1", "0001-01-01T00:00:00Z"],
    ["beyond JavaScript dates", "+275760-09-13T00:00:00.001Z"],
    ["offset", "2030-01-01T00:00:00+01:00"],
    ["number", 1700000000],
    ["empty", ""],
    ["nanoseconds", "2030-12-31T23:59:59.999999999Z"],
    ["NUL", "2030-01-01T00:00:00Z\u0000"],
  ],
};

const MESSAGE: Pool<FuzzJson> = {
  must: [["string", "x"]],
  rest: [
    ["array", []],
    ["number", 1],
    ["empty object", {}],
    ["10,000 levels in an unknown field", { unknown_field: deepObject(DEEP) }],
  ],
};

function listPool(field: DescField, element: Pool<FuzzJson>, valid: FuzzJson | undefined): Pool<FuzzJson> {
  const max = rulesOf(field)?.maxItems;
  const wrap = ([label, value]: Labeled<FuzzJson>): Labeled<FuzzJson> => [`element ${label}`, [value]];
  const long: Labeled<FuzzJson>[] =
    valid === undefined
      ? []
      : max !== undefined
        ? max <= 1000
          ? [["over max items", Array.from({ length: max + 1 }, () => valid)]]
          : []
        : [["10,000 elements", Array.from({ length: 10_000 }, () => valid)]];
  return {
    must: [["not a list", "x"], ...element.must.map(wrap)],
    rest: [["object", {}], ["null element", [null]], ["nested list", [[]]], ...long, ...element.rest.map(wrap)],
  };
}

function mapPool(value: FuzzJson | undefined): Pool<FuzzJson> {
  const v = value ?? "v";
  return {
    must: [
      ["NUL key", { "k\u0000": v }],
      ["not an object", "x"],
    ],
    rest: [
      ["array", []],
      ["lone surrogate key", { "\ud800": v }],
      ["empty key", { "": v }],
      ["wrong value type", { k: [] }],
      ["1,000 keys", Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, v]))],
    ],
  };
}

/** The pool of a field of a JSON body; `valid` is a value its rules accept. */
export function poolOf(field: DescField, valid: FuzzJson | undefined, hugeBytes: number): Pool<FuzzJson> {
  switch (field.fieldKind) {
    case "scalar":
      return scalarPool(field, field.scalar, hugeBytes);
    case "enum":
      return enumPool(field);
    case "list": {
      const element =
        field.listKind === "message"
          ? messagePool(field.message.typeName)
          : field.listKind === "enum"
            ? enumPool(field)
            : scalarPool(field, field.scalar, hugeBytes);
      return listPool(field, element, Array.isArray(valid) ? valid[0] : undefined);
    }
    case "map":
      return mapPool(
        valid !== null && typeof valid === "object" && !Array.isArray(valid) && !(valid instanceof RawJson)
          ? Object.values(valid)[0]
          : undefined,
      );
    case "message":
      return messagePool(field.message.typeName);
  }
}

function scalarPool(field: DescField, scalar: ScalarType, hugeBytes: number): Pool<FuzzJson> {
  if (scalar === ScalarType.STRING || scalar === ScalarType.BYTES) return stringPool(field, hugeBytes);
  if (scalar === ScalarType.BOOL) return BOOL;
  return isInteger(scalar) ? INTEGER : DOUBLE;
}

function messagePool(typeName: string): Pool<FuzzJson> {
  switch (typeName) {
    case "google.protobuf.Struct":
      return STRUCT_POOL;
    case "google.protobuf.Value":
    case "google.protobuf.ListValue":
      return VALUE;
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
    case "google.protobuf.FieldMask":
      return TIMESTAMP;
    default:
      return MESSAGE;
  }
}

/** Raw text for a query parameter or path segment (percent-escapes as given). */
export const SEGMENT_POOL: Pool<string> = {
  must: [
    ["dot-dot", ".."],
    ["NUL", "%00"],
    ["malformed escape", "%zz"],
  ],
  rest: [
    ["dot", "."],
    ["encoded dot-dot", "%2e%2e"],
    ["NUL inside", "a%00b"],
    ["lone percent", "%"],
    ["encoded slash", "a%2Fb"],
    ["encoded lone surrogate", "%ED%A0%80"],
    ["overlong UTF-8 dot", "%C0%AE"],
    ["emoji", "%F0%9F%98%80"],
    ["4,000 characters", "p".repeat(4000)],
    ["space", "%20"],
    ["-1", "-1"],
    ["20 digits", "99999999999999999999"],
    ["quote-heavy", "'%20OR%20'1'='1"],
  ],
};

export function queryPool(field: DescField): Pool<string> {
  const scalar =
    field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar")
      ? field.scalar
      : undefined;
  const typed: Labeled<string>[] =
    scalar === undefined
      ? [
          ["unknown enum value", "no_such_value"],
          ...enumWires(field)
            .slice(0, 2)
            .map((w): Labeled<string> => [`'${w}'`, encodeURIComponent(w)]),
        ]
      : scalar === ScalarType.BOOL
        ? [
            ["word", "maybe"],
            ["2", "2"],
            ["upper-case", "TRUE"],
          ]
        : scalar === ScalarType.STRING || scalar === ScalarType.BYTES
          ? ODD_TEXT.slice(0, 3).map(([label, text]): Labeled<string> => [label, encodeURIComponent(text)])
          : isInteger(scalar)
            ? [
                ["word", "abc"],
                ["fraction", "1.5"],
                ["-1", "-1"],
                ["2^31", "2147483648"],
                ["1e400", "1e400"],
                ["2^53+1", "9007199254740993"],
                ["2^64", "18446744073709551616"],
                ["-0", "-0"],
                ["hex", "0x10"],
                ["padded", "%201"],
              ]
            : [
                ["NaN", "NaN"],
                ["Infinity", "Infinity"],
                ["1e400", "1e400"],
                ["-0", "-0"],
                ["word", "abc"],
              ];
  return {
    must: [SEGMENT_POOL.must[1]!, SEGMENT_POOL.must[2]!],
    rest: [...typed, ["empty", ""], SEGMENT_POOL.rest[5]!, SEGMENT_POOL.rest[8]!],
  };
}
