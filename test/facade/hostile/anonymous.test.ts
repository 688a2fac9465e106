import { getOption } from "@bufbuild/protobuf";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { Access, access } from "../../../gen/gateway/v1/options_pb.js";
import { allServices } from "../../../wire/services.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { baselinePathValues, CASE_KINDS, casesFor, pathOf, type CaseKind, type FuzzCase } from "./fuzz-cases.js";
import { answerProblems, excerpt, inPool, parsed, send } from "./fuzz-checks.js";
import { Seeded } from "./fuzz-json.js";
import { routeShapes, type RouteShape, type ShapeContext } from "./fuzz-shapes.js";

/**
 * A request without a valid key is a 401 on every route that needs one, whatever else is wrong
 * with it — a malformed or wrong-typed body, wrong-typed query values, `..`, NUL or a malformed
 * escape in a path variable — so an anonymous caller learns nothing about the validation rules
 * and makes the gateway parse nothing. Routes open to anonymous callers (`ACCESS_PUBLIC`) must
 * still answer 2xx or a 4xx envelope. Cases come from the protos, as in fuzz.test.ts.
 */
const test = suite<{ gw: TestGateway }>("hostile input: anonymous requests");
test.before(async (ctx) => {
  ctx.gw = await startTestGateway();
});
test.after(async (ctx) => ctx.gw?.stop());

const UNKNOWN_KEY = "sk-gw-v1-0000000000000000000000000000000000000000000000000000000000000000";
/**
 * Bodies above this size are left out: the bodies near a route's size limit show nothing about
 * the key check that a small malformed body does not, and would make the sweep send megabytes.
 */
const PROBE_BODY_BYTES = 64 * 1024;

/** A case an anonymous caller could probe with: every kind, the values every type gets (not the seeded sample). */
const isProbe = (c: FuzzCase) => !c.sampled && (c.body?.length ?? 0) <= PROBE_BODY_BYTES;
/**
 * The keys a probe goes with: the baseline without a key and with one the gateway does not know;
 * the whole-body cases alternately one way and the other (neither may get a body parsed); the rest
 * without a key.
 */
function keysFor(c: FuzzCase, index: number): Array<string | undefined> {
  if (c.kind === "baseline") return [undefined, UNKNOWN_KEY];
  return c.kind === "body" && index % 2 === 1 ? [UNKNOWN_KEY] : [undefined];
}

const needsKey = (shape: RouteShape) => getOption(shape.route.method, access) !== Access.PUBLIC;
const pair = (shape: RouteShape, kind: CaseKind) => `${shape.label} [${kind}]`;

test("every route that needs a key answers 401 with the envelope, whatever else is wrong", async ({ gw }) => {
  let counter = 0;
  const seeded = new Seeded(16);
  const ctx: ShapeContext = { known: {}, model: "mock/chat", unique: () => ++counter, uuid: () => seeded.uuid() };
  const failures: string[] = [];
  const shapes = routeShapes(allServices);
  /** Every route that needs a key, with every kind of case generated for it. */
  const expected = new Set<string>();
  const requests = shapes.flatMap((shape) => {
    const cases = casesFor(shape, { ctx, seeded, pathValues: baselinePathValues(shape, ctx) });
    if (needsKey(shape)) for (const c of cases) expected.add(pair(shape, c.kind));
    return cases.filter(isProbe).flatMap((c, index) => keysFor(c, index).map((key) => ({ c, key })));
  });
  const probed = new Set<string>();
  await inPool(requests, 6, async ({ c, key }) => {
    const answer = await send(gw.url, c.method, c.path, { key, headers: c.headers, body: c.body });
    probed.add(pair(c.shape, c.kind));
    const where = `${c.shape.label} [${c.label}${key ? ", unknown key" : ", no key"}]`;
    for (const problem of answerProblems(answer)) failures.push(`${where}: ${problem}: ${excerpt(answer.text, 200)}`);
    if (needsKey(c.shape) && answer.status !== 401)
      failures.push(`${where}: answered ${answer.status}, not 401: ${excerpt(answer.text, 200)}`);
    if (
      needsKey(c.shape) &&
      answer.status === 401 &&
      (parsed(answer) as { error?: { code?: number } } | undefined)?.error?.code !== 401
    )
      failures.push(`${where}: the 401 has no envelope`);
  });
  console.log(`  ${shapes.length} routes, ${requests.length} anonymous requests`);
  assert.ok(failures.length === 0, `${failures.length} failures:\n${failures.join("\n")}`);

  const keyed = shapes.filter(needsKey);
  assert.ok(keyed.length > 0, "some routes need a key");
  for (const kind of CASE_KINDS)
    assert.ok(
      keyed.some((shape) => expected.has(pair(shape, kind))),
      `no route that needs a key has a case of kind ${kind}`,
    );
  for (const shape of keyed) assert.ok(expected.has(pair(shape, "baseline")), `${shape.label} has no baseline case`);
  const missed = [...expected].filter((p) => !probed.has(p));
  assert.ok(
    missed.length === 0,
    `${missed.length} of ${expected.size} routes × case kinds not probed without a valid key:\n${missed.join("\n")}`,
  );
});

test("a public route still answers without a key", async ({ gw }) => {
  const open = routeShapes(allServices).find(
    (s) => getOption(s.route.method, access) === Access.PUBLIC && s.route.verb === "GET" && s.variables.length === 0,
  );
  assert.ok(open, "the API has a public route");
  const answer = await send(gw.url, "GET", pathOf(open!, []));
  assert.is(answer.status, 200, answer.text);
});

test.run();
