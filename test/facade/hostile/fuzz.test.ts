import { writeFile } from "node:fs/promises";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { allServices } from "../../../wire/services.js";
import { baselinePathValues, casesFor, pathOf, routingCases, type FuzzCase } from "./fuzz-cases.js";
import { answerProblems, excerpt, inPool, parsed, readBackProblems, send, type Answer } from "./fuzz-checks.js";
import { startFuzzGateway, type FuzzGateway } from "./fuzz-gateway.js";
import { Seeded } from "./fuzz-json.js";
import { responseField, routeShapes, type RouteShape, type ShapeContext } from "./fuzz-shapes.js";

/**
 * Every REST route, fuzzed from its proto with a valid management key. The routes,
 * their fields, types and rules come from the facade's own route table, so a new route or field is
 * fuzzed without touching this file. Resources the baseline requests create are addressed by the
 * later routes (updates, sub-resources), and deletions run last. Every answer must be 2xx or a
 * 4xx envelope, leak nothing, and an accepted string must read back as sent, in the answer and in
 * a GET of the resource. `FUZZ_STATS=<file>` writes every answer (route, status, case) to a file,
 * to see what the cases reach.
 */
const test = suite<{ fuzz: FuzzGateway }>("hostile input: every route fuzzed from the protos");
test.before(async (ctx) => {
  ctx.fuzz = await startFuzzGateway();
});
test.after(async (ctx) => ctx.fuzz?.stop());

/** Requests in flight at once: enough to overlap database round trips on a small machine. */
const CONCURRENCY = 6;
const SEED = 16;
/** Failures listed in the assertion message (all are counted). */
const SHOWN = 40;
/**
 * What a run must at least reach, a margin under what it reaches today (the log line prints it):
 * a run whose baseline requests fail answers every case with a tidy 4xx and would pass on
 * nothing — refused creates leave the later routes addressing no resource, refused writes leave
 * nothing to read back.
 */
const FLOORS = { cases: 2_500, created: 5, accepted: 140, readBack: 90 };

class Run {
  readonly failures: string[] = [];
  /** Every answer, one line each (written to $FUZZ_STATS when set: what the suite reaches). */
  readonly stats: string[] = [];
  sent = 0;
  /** Cases checked, by route label. */
  readonly checked = new Map<string, number>();
  /** Writes answered 2xx whose answer was compared with what they sent. */
  accepted = 0;
  /** Of those, the ones a GET of the resource then showed, compared too. */
  readBack = 0;
  /** Id of the resource a POST to this template created. */
  private readonly created = new Map<string, string>();
  /** The same ids by the path variable that addresses them elsewhere. */
  private readonly byVariable = new Map<string, string>();
  private counter = 0;
  readonly seeded = new Seeded(SEED);
  readonly ctx: ShapeContext;

  constructor(
    readonly fuzz: FuzzGateway,
    readonly shapes: RouteShape[],
  ) {
    this.ctx = { known: fuzz.known, model: fuzz.model, unique: () => ++this.counter, uuid: () => this.seeded.uuid() };
  }

  /**
   * A route's cases in lanes: the cases that address a created resource run one after another in
   * the lane of that resource (a read-back GET must not see a later write), the others alone.
   */
  lanes(shapes: RouteShape[]): FuzzCase[][] {
    const lanes = new Map<string, FuzzCase[]>();
    const alone: FuzzCase[][] = [];
    for (const shape of shapes) {
      const { values, resource } = this.pathValues(shape);
      const cases = casesFor(shape, { ctx: this.ctx, seeded: this.seeded, pathValues: values });
      if (!resource) alone.push(...cases.map((c) => [c]));
      else lanes.set(resource, [...(lanes.get(resource) ?? []), ...cases]);
    }
    return [...lanes.values(), ...alone];
  }

  /** Baseline path values, with the ids of created resources where a variable addresses one. */
  private pathValues(shape: RouteShape): { values: string[]; resource: string | undefined } {
    const generated = baselinePathValues(shape, this.ctx);
    let resource: string | undefined;
    const values = shape.variables.map((variable, i) => {
      const prefix = templatePrefix(shape, variable.index);
      const id = this.created.get(prefix) ?? this.byVariable.get(variable.name);
      resource ??= id;
      return id ? encodeURIComponent(id) : generated[i]!;
    });
    return { values, resource };
  }

  async exchange(request: FuzzCase): Promise<Answer> {
    this.sent++;
    return send(this.fuzz.url, request.method, request.path, {
      key: this.fuzz.key,
      headers: request.headers,
      body: request.body,
    });
  }

  async check(request: FuzzCase): Promise<void> {
    this.checked.set(request.shape.label, (this.checked.get(request.shape.label) ?? 0) + 1);
    const answer = await this.exchange(request);
    if (process.env.FUZZ_STATS)
      this.stats.push(
        `${request.shape.label}\t${answer.status}\t${request.label}\t${answer.text.slice(0, 160).replace(/\s+/g, " ")}`,
      );
    const where = `${request.shape.label} [${request.label}]`;
    for (const problem of answerProblems(answer))
      this.failures.push(`${where}: ${problem}: ${excerpt(answer.text, 300)}`);
    if (
      answer.status < 200 ||
      answer.status >= 300 ||
      !request.sent ||
      request.method === "GET" ||
      request.method === "DELETE"
    )
      return;
    const body = parsed(answer);
    this.accepted++;
    this.failures.push(...readBackProblems(request.sent, body, `${where} answer`));
    const follow = this.followUp(request, body);
    if (!follow) return;
    this.sent++;
    const fetched = await send(this.fuzz.url, "GET", follow, { key: this.fuzz.key });
    if (fetched.status !== 200) return;
    this.readBack++;
    this.failures.push(...readBackProblems(request.sent, parsed(fetched), `${where} then GET ${follow}`));
  }

  /** How many created resources the later routes address. */
  get createdCount(): number {
    return this.created.size;
  }

  /** After an accepted create, the ids of what it created, for the routes that address it. */
  remember(shape: RouteShape, body: unknown): void {
    for (const [variable] of this.children(shape)) {
      const id = responseField(body, variable) ?? responseField(body, "id");
      if (typeof id !== "string") continue;
      this.created.set(shape.route.template, id);
      if (!this.byVariable.has(variable)) this.byVariable.set(variable, id);
    }
  }

  /** Routes one path variable below a create route: `POST /x` → `/x/{v}…`. */
  private children(shape: RouteShape): Array<[string, RouteShape]> {
    const depth = shape.route.segments.length;
    return this.shapes.flatMap((other): Array<[string, RouteShape]> => {
      const variable = other.variables.find((v) => v.index === depth);
      return variable && templatePrefix(other, depth) === shape.route.template ? [[variable.name, other]] : [];
    });
  }

  /** The GET that shows what an accepted write stored, when the API has one. */
  private followUp(request: FuzzCase, body: unknown): string | undefined {
    const shape = request.shape;
    if (shape.variables.length === 0 && request.method === "POST") {
      const child = this.children(shape).find(
        ([, other]) => other.route.verb === "GET" && other.route.segments.length === shape.route.segments.length + 1,
      );
      if (!child) return undefined;
      const id = responseField(body, child[0]) ?? responseField(body, "id");
      return typeof id === "string" ? pathOf(child[1], [encodeURIComponent(id)]) : undefined;
    }
    const get = this.shapes.find(
      (other) => other.route.verb === "GET" && other.route.template === shape.route.template,
    );
    return get ? request.path.split("?")[0] : undefined;
  }
}

function templatePrefix(shape: RouteShape, segmentIndex: number): string {
  return `/${shape.route.segments
    .slice(0, segmentIndex)
    .map((s) => (s.kind === "literal" ? s.value : `{${s.field.join(".")}}`))
    .join("/")}`;
}

test("every route: 2xx or a 4xx envelope, nothing leaked, accepted text read back as sent", async ({ fuzz }) => {
  const shapes = routeShapes(allServices);
  const run = new Run(fuzz, shapes);
  const creates = shapes.filter((s) => s.route.verb === "POST" && s.variables.length === 0);
  // Creates first, one at a time, so that the later routes address real resources.
  for (const shape of creates) {
    const [baseline] = casesFor(shape, { ctx: run.ctx, seeded: run.seeded, pathValues: [] });
    const answer = await run.exchange(baseline!);
    if (answer.status >= 200 && answer.status < 300) run.remember(shape, parsed(answer));
    for (const problem of answerProblems(answer))
      run.failures.push(`${shape.label} [baseline]: ${problem}: ${excerpt(answer.text, 300)}`);
  }
  const phases = [shapes.filter((s) => s.route.verb !== "DELETE"), shapes.filter((s) => s.route.verb === "DELETE")];
  let cases = 0;
  for (const phase of phases) {
    const lanes = run.lanes(phase);
    cases += lanes.reduce((n, lane) => n + lane.length, 0);
    await inPool(lanes, CONCURRENCY, async (lane) => {
      for (const request of lane) await run.check(request);
    });
  }
  for (const [label, method, path] of routingCases()) {
    const answer = await send(fuzz.url, method, path, { key: fuzz.key });
    for (const problem of answerProblems(answer))
      run.failures.push(`${method} ${excerpt(path, 60)} [${label}]: ${problem}: ${excerpt(answer.text, 300)}`);
  }
  if (process.env.FUZZ_STATS)
    await writeFile(process.env.FUZZ_STATS, [...run.stats, "FAILURES", ...run.failures].join("\n"));
  console.log(
    `  fuzzed ${shapes.length} routes with ${cases} cases (${run.sent} requests with follow-ups); ` +
      `${run.createdCount} resources created, ${run.accepted} writes accepted, ${run.readBack} read back`,
  );
  assert.ok(run.failures.length === 0, `${run.failures.length} failures:\n${run.failures.slice(0, SHOWN).join("\n")}`);

  const checked = [...run.checked.values()].reduce((n, c) => n + c, 0);
  assert.is(checked, cases, "every generated case is sent");
  assert.ok(cases >= FLOORS.cases, `${cases} cases, fewer than ${FLOORS.cases}`);
  const unfuzzed = shapes.filter((s) => (run.checked.get(s.label) ?? 0) < 2).map((s) => s.label);
  assert.ok(unfuzzed.length === 0, `routes sent no more than their baseline:\n${unfuzzed.join("\n")}`);
  assert.ok(
    run.createdCount >= FLOORS.created,
    `${run.createdCount} resources created for the later routes, fewer than ${FLOORS.created}`,
  );
  assert.ok(run.accepted >= FLOORS.accepted, `${run.accepted} writes accepted, fewer than ${FLOORS.accepted}`);
  assert.ok(
    run.readBack >= FLOORS.readBack,
    `${run.readBack} accepted writes read back with a GET, fewer than ${FLOORS.readBack}`,
  );
});

test.run();
