import { Writable } from "node:stream";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { loadConfig } from "../../server/platform/config.js";
import { chooseLogFormat, createLogger, writeToLogOutput } from "../../server/platform/logger.js";

/**
 * The log's format (server/platform/logger.ts): pretty on a terminal, JSON otherwise,
 * GATEWAY_LOG_FORMAT over both, anything else a start-up error naming the setting; and the pretty
 * output is for people (no JSON objects) with the same secrets redacted.
 */
const test = suite("observability: log format");

/** A logger of `format` writing into memory, and what it wrote once its lines are through. */
function logInto(format: "json" | "pretty") {
  let text = "";
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString("utf8");
      done();
    },
  });
  return { log: createLogger("info", sink, format), written: () => text };
}

/** pino-pretty writes through a stream of its own: its lines arrive a turn later. */
const through = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test("the format: pretty on a terminal, JSON otherwise, the setting over both", () => {
  assert.is(chooseLogFormat(undefined, true), "pretty");
  assert.is(chooseLogFormat(undefined, false), "json");
  assert.is(chooseLogFormat("json", true), "json");
  assert.is(chooseLogFormat("pretty", false), "pretty");
});

test("GATEWAY_LOG_FORMAT: json, pretty or unset; anything else stops the start naming the setting", () => {
  assert.is(loadConfig({}).logFormat, undefined);
  assert.is(loadConfig({ GATEWAY_LOG_FORMAT: "json" }).logFormat, "json");
  assert.is(loadConfig({ GATEWAY_LOG_FORMAT: "pretty" }).logFormat, "pretty");
  assert.throws(
    () => loadConfig({ GATEWAY_LOG_FORMAT: "text" }),
    /GATEWAY_LOG_FORMAT must be json or pretty, got "text"/,
  );
  assert.throws(() => loadConfig({ GATEWAY_LOG_FORMAT: "JSON" }), /GATEWAY_LOG_FORMAT/);
});

test("pretty: a readable line per entry, no JSON objects, secrets redacted as in JSON", async () => {
  const { log, written } = logInto("pretty");
  log.info(
    {
      requestId: "req-1",
      status: 200,
      authorization: "Bearer sk-gw-v1-secret",
      headers: { authorization: "Bearer sk-gw-v1-other" },
    },
    "request",
  );
  log.warn({ provider: "mockai" }, "upstream timed out before answering");
  writeToLogOutput(log, "Management API key (shown once):\n");
  await through();
  const text = written();
  const lines = text.split("\n").filter((line) => line !== "");
  assert.ok(lines.length >= 3, text);
  for (const line of lines) assert.not.match(line, /^\s*\{"/, `a JSON object at the start of a line: ${line}`);
  assert.match(text, /INFO.*: request\n/);
  assert.match(text, /WARN.*: upstream timed out before answering\n/);
  assert.match(text, /requestId: "req-1"/);
  assert.match(text, /Management API key \(shown once\):\n$/, "text written between lines keeps its place");
  assert.not.match(text, /sk-gw-v1-secret|sk-gw-v1-other/);
  assert.match(text, /\[redacted\]/);
});

test("json: one JSON object per line, the same redaction", async () => {
  const { log, written } = logInto("json");
  log.info({ requestId: "req-2", authorization: "Bearer sk-gw-v1-secret" }, "request");
  await through();
  const [line, ...rest] = written()
    .split("\n")
    .filter((l) => l !== "");
  assert.equal(rest, []);
  const parsed = JSON.parse(line ?? "") as Record<string, unknown>;
  assert.equal([parsed.msg, parsed.requestId, parsed.authorization], ["request", "req-2", "[redacted]"]);
});

test.run();
