import http from "node:http";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../support/eventually.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { accessLinesOf, captureLogs, type LogLine } from "../support/log-lines.js";

/**
 * A client that goes away is normal traffic: it is logged at info with its request id, never at
 * error, whether it leaves while its body is being read or while a file is uploading.
 */
const { log, lines } = captureLogs("debug");

const test = suite<{ gw: TestGateway }>("facade: client aborts");

test.before(async (ctx) => {
  ctx.gw = await startTestGateway({}, {}, log);
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

/**
 * Sends the head, and once the gateway is handling the request, part of a body; then resets the
 * connection. `Expect: 100-continue` is how the client knows: node's server answers "100 Continue"
 * as it hands the request to the gateway, so the cut never lands before the gateway has the request
 * (a pause after the write could, on a busy machine, and then nothing would be logged at all).
 */
async function leaveMidBody(base: string, path: string, headers: Record<string, string>, part: string): Promise<void> {
  const url = new URL(base);
  await new Promise<void>((resolve) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path,
      headers: { ...headers, expect: "100-continue" },
    });
    req.on("error", () => resolve());
    req.on("continue", () => req.write(part, () => req.destroy()));
    req.on("close", () => resolve());
    req.flushHeaders();
  });
}

/**
 * The lines logged since `before`, once the request's access line is among them. The facade writes
 * that line when its handling has settled, which for an upload is after the core's handler has
 * returned or thrown (the in-process call awaits it): whatever either made of the cut-off request
 * is logged by then.
 */
function loggedUntilEnded(before: number, requestId: string): Promise<LogLine[]> {
  return eventually(() => lines.slice(before), `the access line of ${requestId}`, {
    until: (logged) => accessLinesOf(logged, requestId).length > 0,
  });
}

test("a client leaving while its JSON body is read: info with its request id, no error", async ({ gw }) => {
  const before = lines.length;
  await leaveMidBody(
    gw.url,
    "/api/v1/chat/completions",
    {
      authorization: `Bearer ${gw.key}`,
      "content-type": "application/json",
      "content-length": "100000",
      "x-request-id": "abort-json-1",
    },
    '{"model":"x","messages":[',
  );
  const logged = await loggedUntilEnded(before, "abort-json-1");
  assert.ok(
    logged.some((l) => l.level === 30 && l.requestId === "abort-json-1"),
    JSON.stringify(logged),
  );
  assert.equal(
    logged.filter((l) => l.level >= 50),
    [],
  );
});

test("a client leaving mid-upload: no error line", async ({ gw }) => {
  const before = lines.length;
  const boundary = "b0undary";
  const head =
    `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\n` +
    `content-disposition: form-data; name="file"; filename="a.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n` +
    `${'{"a":1}\n'.repeat(2000)}`;
  await leaveMidBody(
    gw.url,
    "/api/v1/files",
    {
      authorization: `Bearer ${gw.key}`,
      "content-type": `multipart/form-data; boundary=${boundary}`,
      "content-length": String(10 * 1024 * 1024),
      "x-request-id": "abort-upload-1",
    },
    head,
  );
  const logged = await loggedUntilEnded(before, "abort-upload-1");
  assert.ok(
    logged.some(
      (l) =>
        l.level === 30 &&
        l.msg === "client closed the connection before the answer" &&
        l.requestId === "abort-upload-1",
    ),
    JSON.stringify(logged),
  );
  assert.equal(
    logged.filter((l) => l.level >= 50),
    [],
  );
});

test.run();
