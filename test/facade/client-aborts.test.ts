import http from "node:http";
import { Writable } from "node:stream";
import { pino } from "pino";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { eventually } from "../support/eventually.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";

/**
 * A client that goes away is normal traffic (issue 16): it is logged at info with its request id,
 * never at error, whether it leaves while its body is being read or while a file is uploading.
 */
const lines: Array<{ level: number; msg: string; requestId?: string }> = [];
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line) as (typeof lines)[number]);
    done();
  },
});

const test = suite<{ gw: TestGateway }>("facade: client aborts");

test.before(async (ctx) => {
  ctx.gw = await startTestGateway({}, {}, pino({ level: "debug", base: undefined }, capture));
});
test.after(async (ctx) => {
  await ctx.gw.stop();
});

/** Sends the head and part of a body, then resets the connection. */
async function leaveMidBody(base: string, path: string, headers: Record<string, string>, part: string): Promise<void> {
  const url = new URL(base);
  await new Promise<void>((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, method: "POST", path, headers });
    req.on("error", () => resolve());
    req.write(part, () => setTimeout(() => req.destroy(), 100));
    req.on("close", () => resolve());
  });
}

/** Lines of the request, once it has any: the gateway logs the client's leaving after it has gone. */
function loggedFor(before: number, requestId: string): Promise<typeof lines> {
  return eventually(() => lines.slice(before), `a line of ${requestId} is logged`, { until: (logged) => logged.some((l) => l.requestId === requestId) });
}

test("a client leaving while its JSON body is read: info with its request id, no error", async ({ gw }) => {
  const before = lines.length;
  await leaveMidBody(gw.url, "/api/v1/chat/completions", { authorization: `Bearer ${gw.key}`, "content-type": "application/json", "content-length": "100000", "x-request-id": "abort-json-1" }, '{"model":"x","messages":[');
  const logged = await loggedFor(before, "abort-json-1");
  assert.ok(logged.some((l) => l.level === 30 && l.requestId === "abort-json-1"), JSON.stringify(logged));
  assert.equal(logged.filter((l) => l.level >= 50), []);
});

test("a client leaving mid-upload: no error line", async ({ gw }) => {
  const before = lines.length;
  const boundary = "b0undary";
  const head = `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n${'{"a":1}\n'.repeat(2000)}`;
  await leaveMidBody(gw.url, "/api/v1/files", { authorization: `Bearer ${gw.key}`, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(10 * 1024 * 1024), "x-request-id": "abort-upload-1" }, head);
  await loggedFor(before, "abort-upload-1");
  // Whatever the core made of the cut-off upload has been logged by now.
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(lines.slice(before).filter((l) => l.level >= 50), []);
});

test.run();
