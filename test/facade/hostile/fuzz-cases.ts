import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { deepArray, deepObject, jsonText, withValueAt, type FuzzObject, type Seeded } from "./fuzz-json.js";
import { baselineOf, fieldValue, stringValue, type RouteShape, type ShapeContext } from "./fuzz-shapes.js";
import { poolOf, queryPool, SEGMENT_POOL, STRUCT_POOL, type Labeled, type Pool } from "./fuzz-values.js";

/**
 * The requests the hostile-input suites send for one route, all derived from its shape: the
 * baseline, garbage in each path variable and query parameter, malformed bodies, and one field of
 * the baseline body at a time replaced by a hostile value of its type (nested fields too, two
 * levels down). A seeded sample bounds the cases per field.
 */
export interface FuzzCase {
  shape: RouteShape;
  kind: CaseKind;
  /**
   * Whether the hostile value was drawn by the seeded sample of its pool rather than being one of
   * the values every field, parameter or segment of its type gets.
   */
  sampled: boolean;
  label: string;
  method: string;
  /** Path and query exactly as sent (percent-escapes included). */
  path: string;
  body?: string | Buffer;
  headers: Record<string, string>;
  /** The JSON body as built, for the read-back check of accepted values. */
  sent?: FuzzObject;
}

/**
 * What a case breaks, set where it is made, so that a suite selects cases without parsing labels:
 * `path` a path variable, `query` the query string, `body` the whole body (malformed or oddly
 * wrapped), `field` one field of a JSON body, `free-form` a Struct body, `upload` the multipart.
 */
export const CASE_KINDS = ["baseline", "path", "query", "body", "field", "free-form", "upload"] as const;
export type CaseKind = (typeof CASE_KINDS)[number];

export interface CaseOptions {
  ctx: ShapeContext;
  seeded: Seeded;
  /** Percent-encoded value of each path variable, in the shape's order. */
  pathValues: string[];
}

/** Extra seeded cases per field, beyond its type's `must` cases. */
const SAMPLED_TOP = 4;
const SAMPLED_NESTED = 2;
/** How deep into nested messages single fields are replaced. */
const SLOT_DEPTH = 2;
const JSON_HEADERS = { "content-type": "application/json" };

export function pathOf(shape: RouteShape, values: readonly string[], query = ""): string {
  let next = 0;
  const path = `/${shape.route.segments.map((s) => (s.kind === "literal" ? s.value : values[next++]!)).join("/")}`;
  return query ? `${path}?${query}` : path;
}

/** A value each path variable's field accepts, percent-encoded. */
export function baselinePathValues(shape: RouteShape, ctx: ShapeContext): string[] {
  return shape.variables.map(({ field }) => encodeURIComponent(field ? String(plainValue(field, ctx)) : "fuzz"));
}

function plainValue(field: DescField, ctx: ShapeContext): string | number | boolean {
  const value = fieldValue(field, ctx, 0);
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? value
    : stringValue(field, undefined, ctx);
}

export function casesFor(shape: RouteShape, { ctx, seeded, pathValues }: CaseOptions): FuzzCase[] {
  const method = shape.route.verb;
  const make = (
    kind: CaseKind,
    [label, sampled]: Picked,
    path: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
    sent?: FuzzObject,
  ): FuzzCase => ({
    shape,
    kind,
    sampled,
    label,
    method,
    path,
    body,
    headers,
    sent,
  });
  const body = shape.body;
  // Each case gets fresh unique names, so that creates do not collide on them (409).
  const fresh = (): FuzzObject | undefined =>
    body.kind === "json" ? baselineOf(body.schema, ctx, body.exclude) : undefined;
  const baseline = fresh();
  const upload = body.kind === "multipart" ? multipartBody("fuzz.txt", Buffer.from("hello fuzz\n")) : undefined;
  const headers = baseline ? JSON_HEADERS : (upload?.headers ?? {});
  /** The baseline body again, with names of its own. */
  const again = () => {
    const json = fresh();
    return json ? jsonText(json) : upload?.body;
  };
  const at = (query = "") => pathOf(shape, pathValues, query);
  const cases: FuzzCase[] = [
    make("baseline", fixed("baseline"), at(), baseline ? jsonText(baseline) : upload?.body, headers, baseline),
  ];

  shape.variables.forEach((variable, index) => {
    for (const [label, segment, sampled] of pick(seeded, SEGMENT_POOL, SAMPLED_TOP)) {
      const values = pathValues.map((v, i) => (i === index ? segment : v));
      cases.push(make("path", [`path {${variable.name}}: ${label}`, sampled], pathOf(shape, values), again(), headers));
    }
  });

  cases.push(
    make(
      "query",
      fixed("unknown and malformed query parameters"),
      at(`%zz=1&a=%00&__proto__=x&constructor%5Bprototype%5D=y&unknown=${"q".repeat(2000)}`),
      again(),
      headers,
    ),
  );
  for (const field of shape.queryFields) {
    for (const [label, text, sampled] of pick(seeded, queryPool(field), SAMPLED_NESTED))
      cases.push(
        make("query", [`query ${field.name}: ${label}`, sampled], at(`${field.name}=${text}`), again(), headers),
      );
    if (field.fieldKind === "list")
      cases.push(
        make(
          "query",
          fixed(`query ${field.name}: repeated`),
          at(`${field.name}=a&${field.name}=%00`),
          again(),
          headers,
        ),
      );
  }

  const hugeBytes = Math.min(Math.floor(shape.route.maxBodyBytes / 4), 256 * 1024);
  if (baseline) {
    for (const [label, raw, headers, sent] of malformedBodies(
      fresh()!,
      Math.min(shape.route.maxBodyBytes, 1024 * 1024),
    )) {
      cases.push(make("body", fixed(`body: ${label}`), at(), raw, headers ?? JSON_HEADERS, sent));
    }
  }
  if (body.kind === "json" && body.schema && baseline) {
    for (const slot of slotsOf(body.schema, body.exclude)) {
      const valid = fieldValue(slot.field, ctx, 0);
      const pool = poolOf(slot.field, valid, hugeBytes);
      for (const [label, value, sampled] of pick(seeded, pool, slot.path.length === 1 ? SAMPLED_TOP : SAMPLED_NESTED)) {
        const sent = withValueAt(fresh()!, slot.path, value);
        cases.push(
          make("field", [`${slot.path.join(".")}: ${label}`, sampled], at(), jsonText(sent), JSON_HEADERS, sent),
        );
      }
    }
  }
  if (body.kind === "json" && !body.schema) {
    for (const [label, value, sampled] of pick(seeded, STRUCT_POOL, SAMPLED_TOP)) {
      cases.push(make("free-form", [`free-form body: ${label}`, sampled], at(), jsonText(value), JSON_HEADERS));
    }
  }
  if (body.kind === "multipart") {
    for (const [label, upload, sent] of multipartCases())
      cases.push(make("upload", fixed(`upload: ${label}`), at(), upload.body, upload.headers, sent));
  }
  return cases;
}

/** A case's label, and whether its value was drawn by the seeded sample. */
type Picked = [label: string, sampled: boolean];
const fixed = (label: string): Picked => [label, false];

/** The pool's `must` values, then a seeded sample of the rest, each marked as sampled or not. */
function pick<T>(seeded: Seeded, pool: Pool<T>, extra: number): Array<[...Labeled<T>, boolean]> {
  const mark =
    (sampled: boolean) =>
    ([label, value]: Labeled<T>): [...Labeled<T>, boolean] => [label, value, sampled];
  return [...pool.must.map(mark(false)), ...seeded.sample(pool.rest, extra).map(mark(true))];
}

interface Slot {
  path: Array<string | number>;
  field: DescField;
}

/** Every field of the body and of its nested messages (first list element, first map entry). */
function slotsOf(schema: DescMessage, exclude: ReadonlySet<string>, prefix: Array<string | number> = []): Slot[] {
  const slots: Slot[] = [];
  for (const field of schema.fields) {
    if (prefix.length === 0 && exclude.has(field.name)) continue;
    const path = [...prefix, field.name];
    slots.push({ path, field });
    const nested =
      field.fieldKind === "message" ||
      (field.fieldKind === "list" && field.listKind === "message") ||
      (field.fieldKind === "map" && field.mapKind === "message")
        ? field.message
        : undefined;
    if (!nested || nested.typeName.startsWith("google.") || depthOf(prefix) >= SLOT_DEPTH) continue;
    const into = field.fieldKind === "list" ? [...path, 0] : field.fieldKind === "map" ? [...path, "key"] : path;
    slots.push(...slotsOf(nested, exclude, into));
  }
  return slots;
}

const depthOf = (path: Array<string | number>) => path.filter((step) => typeof step === "string").length;

type BodyCase = [label: string, body: string | Buffer, headers?: Record<string, string>, sent?: FuzzObject];

/** Bodies no JSON object parser should take, and valid ones in odd wrapping. */
function malformedBodies(baseline: FuzzObject, limit: number): BodyCase[] {
  const valid = jsonText(baseline);
  const [firstKey] = Object.keys(baseline);
  return [
    ["truncated", "{"],
    ["missing value", '{"a":}'],
    ["array", "[1,2]"],
    ["string", '"str"'],
    ["null", "null"],
    ["1e400", "1e400"],
    ["trailing garbage", `${valid}garbage`],
    ["byte order mark", `\ufeff${valid}`],
    ["raw NUL inside a string", '{"a":"\u0000"}'],
    ["invalid UTF-8", Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xae]), Buffer.from('"}')])],
    ["empty", ""],
    ["10,000 nested arrays", deepArray(10_000).text],
    ["10,000 nested objects in an unknown field", `{"unknown_field":${deepObject(10_000).text}}`],
    ["__proto__ key", `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}`],
    ...(firstKey ? ([["duplicate key", `{${JSON.stringify(firstKey)}:1,${valid.slice(1)}`]] as BodyCase[]) : []),
    ["an unknown field near the size limit", jsonText({ unknown_field: "u".repeat(Math.floor(limit * 0.9)) })],
    ["valid, sent as text/plain", valid, { "content-type": "text/plain" }, baseline],
  ];
}

interface Upload {
  body: Buffer;
  headers: Record<string, string>;
}

function multipartBody(
  fileName: string | Buffer,
  content: Buffer,
  options: { disposition?: string; truncated?: boolean } = {},
): Upload {
  const boundary = "fuzz-boundary-7f3a";
  const disposition = options.disposition ?? `form-data; name="file"; filename="`;
  const head = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}`),
    Buffer.from(fileName),
    Buffer.from(`"\r\nContent-Type: text/plain\r\n\r\n`),
  ]);
  const tail = Buffer.from(options.truncated ? "\r\n--" : `\r\n--${boundary}--\r\n`);
  return {
    body: Buffer.concat([head, content, tail]),
    headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
  };
}

function multipartCases(): Array<[string, Upload, FuzzObject | undefined]> {
  const text = Buffer.from("hello fuzz\n");
  const named = (name: string): [Upload, FuzzObject] => [multipartBody(name, text), { filename: name }];
  return [
    ["not multipart", { body: Buffer.from('{"file":"x"}'), headers: JSON_HEADERS }, undefined],
    ["NUL in the file name", multipartBody(Buffer.from("a\u0000b.txt"), text), undefined],
    [
      "invalid UTF-8 in the file name",
      multipartBody(Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x2e, 0x74]), text),
      undefined,
    ],
    ["5,000-character file name", ...named(`${"n".repeat(5000)}.txt`)],
    // The directory part of a multipart file name is dropped, as RFC 7578 §4.2 allows: no read-back.
    ["file name with a path", multipartBody("../../etc/passwd", text), undefined],
    ["odd file name", ...named("😀 e\u0301 (1) [x] {y}.txt")],
    ["empty file", multipartBody("empty.txt", Buffer.alloc(0)), undefined],
    ["no file part", multipartBody("", text, { disposition: `form-data; name="other`, truncated: false }), undefined],
    ["truncated", multipartBody("cut.txt", text, { truncated: true }), undefined],
  ];
}

/** Requests no route matches, or match with a verb or path form no route has. */
export function routingCases(): Array<[label: string, method: string, path: string]> {
  // Paths outside /api/ belong to the Connect and gRPC-Web protocols, not to the REST API.
  return [
    ["dot-dot before a route", "GET", "/api/v1/../api/v1/key"],
    ["trailing slash", "GET", "/api/v1/key/"],
    ["malformed escape", "GET", "/api/v1/%zz"],
    ["NUL segment", "GET", "/api/v1/%00"],
    ["no such route", "GET", "/api/v1/no-such-route"],
    ["unknown verb", "PROPFIND", "/api/v1/key"],
    ["TRACE", "TRACE", "/api/v1/key"],
    ["wrong verb", "PUT", "/api/v1/key"],
    ["long path", "GET", `/api/v1/${"l".repeat(8000)}`],
  ];
}
