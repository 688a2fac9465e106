import { getOption } from "@bufbuild/protobuf";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { Access, access } from "../../gen/gateway/v1/options_pb.js";
import { allServices } from "../../wire/services.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { baselinePathValues, casesFor, pathOf, type FuzzCase } from "./fuzz-cases.js";
import { answerProblems, excerpt, inPool, parsed, send } from "./fuzz-checks.js";
import { Seeded } from "./fuzz-json.js";
import { routeShapes, type RouteShape, type ShapeContext } from "./fuzz-shapes.js";

/**
 * Issue 16, spec 5.1: a request without a valid key is a 401 on every route that needs one,
 * whatever else is wrong with it — a malformed or wrong-typed body, wrong-typed query values,
 * `..`, NUL or a malformed escape in a path variable — so an anonymous caller learns nothing
 * about the validation rules and makes the gateway parse nothing. Routes open to anonymous
 * callers (`ACCESS_PUBLIC`) must still answer 2xx or a 4xx envelope. Cases come from the protos,
 * as in fuzz.test.ts.
 */
const test = suite<{ gw: TestGateway }>("hostile input: anonymous requests");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => ctx.gw?.stop());

const UNKNOWN_KEY = "sk-gw-v1-0000000000000000000000000000000000000000000000000000000000000000";

/** Of each route's generated cases, those an anonymous caller could use to probe. */
const PROBES = /^(baseline|path \{.*\}: (dot-dot|NUL|malformed escape)|unknown and malformed query parameters|query .*|body: (truncated|array|1e400|10,000 nested arrays)|upload: not multipart|[a-z_]+: (NUL|number|object|not a list|string|1e400|unknown value|string 'true'|not an object))$/;

function probesOf(shape: RouteShape, ctx: ShapeContext, seeded: Seeded): FuzzCase[] {
  return casesFor(shape, { ctx, seeded, pathValues: baselinePathValues(shape, ctx) }).filter((c) => PROBES.test(c.label));
}

test("every route that needs a key answers 401 with the envelope, whatever else is wrong", async ({ gw }) => {
  let counter = 0;
  const seeded = new Seeded(16);
  const ctx: ShapeContext = { known: {}, model: "mock/chat", unique: () => ++counter, uuid: () => seeded.uuid() };
  const failures: string[] = [];
  let sent = 0;
  const shapes = routeShapes(allServices);
  const requests = shapes.flatMap((shape) => probesOf(shape, ctx, seeded).flatMap((c) => [{ c, key: undefined }, ...(c.label === "baseline" || c.label.startsWith("body:") ? [{ c, key: UNKNOWN_KEY }] : [])]));
  await inPool(requests, 6, async ({ c, key }) => {
    sent++;
    const answer = await send(gw.url, c.method, c.path, { key, headers: c.headers, body: c.body });
    const where = `${c.shape.label} [${c.label}${key ? ", unknown key" : ", no key"}]`;
    const isPublic = getOption(c.shape.route.method, access) === Access.PUBLIC;
    for (const problem of answerProblems(answer)) failures.push(`${where}: ${problem}: ${excerpt(answer.text, 200)}`);
    if (!isPublic && answer.status !== 401) failures.push(`${where}: answered ${answer.status}, not 401: ${excerpt(answer.text, 200)}`);
    if (!isPublic && answer.status === 401 && (parsed(answer) as { error?: { code?: number } } | undefined)?.error?.code !== 401) failures.push(`${where}: the 401 has no envelope`);
  });
  console.log(`  ${shapes.length} routes, ${sent} anonymous requests`);
  assert.ok(failures.length === 0, `${failures.length} failures:\n${failures.join("\n")}`);
});

test("a public route still answers without a key", async ({ gw }) => {
  const open = routeShapes(allServices).find((s) => getOption(s.route.method, access) === Access.PUBLIC && s.route.verb === "GET" && s.variables.length === 0);
  assert.ok(open, "the API has a public route");
  const answer = await send(gw.url, "GET", pathOf(open!, []));
  assert.is(answer.status, 200, answer.text);
});

test.run();
