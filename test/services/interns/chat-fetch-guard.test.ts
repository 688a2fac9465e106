import http from "node:http";
import type { AddressInfo } from "node:net";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import {
  answerBody,
  ChatStream,
  contentOf,
  pausedQuestion,
  promptBody,
  runningInternId,
  startRuntimeGateway,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * Where the intern's fetch tool may go, driven through the scripted model: a local HTTP server
 * stands for every hostname (GATEWAY_INTERN_FETCH_RESOLVE points them at 127.0.0.1) and records
 * each request it gets, so "refused" means it saw nothing. Only `api.example.test` is listed in
 * GATEWAY_INTERN_FETCH_ALLOWED_HOSTS; `internal.example.test` has the same address and is not.
 * The server speaks plain http, which is also what the https rule for secrets is tested with.
 */
interface Seen {
  host: string;
  path: string;
  authorization: string | undefined;
}

/** Put into refused URLs' queries: a refusal names the host, never the whole URL. */
const QUERY_MARK = "q-mark-5e1f";
const test = suite<{ env: RuntimeEnv; target: http.Server; port: number; seen: Seen[]; internId: string }>(
  "interns: where fetch may go, manual approval and https-only secrets",
);

test.before(async (context) => {
  context.seen = [];
  context.target = http.createServer((req, res) => {
    context.seen.push({ host: req.headers.host ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    const port = context.port;
    if (req.url === "/to-internal")
      res.writeHead(302, { location: `http://internal.example.test:${port}/landing` }).end();
    else if (req.url === "/to-loopback") res.writeHead(302, { location: `http://127.0.0.1:${port}/landing` }).end();
    else res.writeHead(200, { "content-type": "text/plain" }).end(`page ${req.url}`);
  });
  await new Promise<void>((resolve) => context.target.listen(0, "127.0.0.1", resolve));
  context.port = (context.target.address() as AddressInfo).port;
  context.env = await startRuntimeGateway({
    GATEWAY_INTERN_FETCH_RESOLVE:
      "api.example.test=127.0.0.1,internal.example.test=127.0.0.1," +
      "lan.example.test=10.1.2.3,metadata.example.test=169.254.169.254",
    GATEWAY_INTERN_FETCH_ALLOWED_HOSTS: "api.example.test",
  });
  context.internId = await runningInternId(context.env, "guarded");
});
test.after(async ({ env, target }) => {
  await env.stop();
  target.closeAllConnections();
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

type Result = Record<string, unknown>;

function fetchStep(url: string, headers: Record<string, string> = {}) {
  return { toolCall: { name: "fetch", arguments: JSON.stringify({ url, headers }) } };
}

/** Runs `steps` as one scripted run (auto approval); answers their tool results in order. */
async function fetchAll(
  env: RuntimeEnv,
  internId: string,
  script: string,
  steps: ReturnType<typeof fetchStep>[],
): Promise<Result[]> {
  env.upstream.scripts.define(script, [...steps, { reply: "fetched" }]);
  env.upstream.requests.length = 0;
  const stream = await ChatStream.open(env.gw.url, env.key, internId, promptBody(`[script:${script}] fetch`));
  assert.is(contentOf(await stream.rest()), "fetched");
  return toolResults(env);
}

/** The tool results of the conversation the model saw last. */
function toolResults(env: RuntimeEnv): Result[] {
  const messages = at(env.upstream.requests.at(-1)?.body, "messages") as Result[];
  return messages
    .filter((message) => message.role === "tool")
    .map((message) => JSON.parse(message.content as string) as Result);
}

test(
  "refused by default, nothing sent: " +
    "loopback, the three cloud metadata addresses, private addresses, and names fixed to them",
  async ({ env, port, seen, internId }) => {
    const refused: Array<[string, string]> = [
      [`http://127.0.0.1:${port}/page?${QUERY_MARK}`, "127.0.0.1"],
      [`http://[::1]:${port}/page?${QUERY_MARK}`, "::1"],
      [`http://localhost:${port}/page?${QUERY_MARK}`, "localhost"],
      [`http://internal.example.test:${port}/page?${QUERY_MARK}`, "internal.example.test"],
      [`http://169.254.169.254/latest/meta-data/?${QUERY_MARK}`, "169.254.169.254"],
      [`http://[fd00:ec2::254]/latest/meta-data/?${QUERY_MARK}`, "fd00:ec2::254"],
      [`http://168.63.129.16/metadata/instance?${QUERY_MARK}`, "168.63.129.16"],
      [`http://metadata.example.test/computeMetadata/v1/?${QUERY_MARK}`, "metadata.example.test"],
      [`http://10.1.2.3/?${QUERY_MARK}`, "10.1.2.3"],
      [`http://192.168.1.1/?${QUERY_MARK}`, "192.168.1.1"],
      [`http://lan.example.test/?${QUERY_MARK}`, "lan.example.test"],
    ];
    const before = seen.length;
    const results = await fetchAll(
      env,
      internId,
      "refused",
      refused.map(([url]) => fetchStep(url)),
    );
    assert.is(results.length, refused.length);
    refused.forEach(([url, host], i) => {
      const error = String(results[i]!.error);
      assert.ok(error.includes(`request to host ${host} refused`), `${url}: ${error}`);
      assert.match(error, /loopback, private, link-local or cloud metadata address/, url);
      assert.not.ok(error.includes(QUERY_MARK), `${url}: the refusal names the host, not the URL`);
    });
    assert.equal(seen.slice(before), [], "the server saw nothing");
  },
);

test("the gateway's own HTTP and gRPC ports are refused on any host, an allowed one included", async ({
  env,
  seen,
  internId,
}) => {
  const httpPort = Number(new URL(env.gw.url).port);
  const grpcPort = Number(new URL(env.gw.gateway.grpcUrl).port);
  const results = await fetchAll(env, internId, "own-ports", [
    fetchStep(`http://api.example.test:${httpPort}/api/v1/models`),
    fetchStep(`http://api.example.test:${grpcPort}/`),
  ]);
  assert.match(
    String(results[0]!.error),
    new RegExp(`request to host api\\.example\\.test refused: port ${httpPort} is the gateway's own`),
  );
  assert.match(
    String(results[1]!.error),
    new RegExp(`request to host api\\.example\\.test refused: port ${grpcPort} is the gateway's own`),
  );
  assert.not.ok(seen.some((request) => request.path === "/api/v1/models"));
});

test(
  "an allowed host works where its address under another name does not; " +
    "a redirect from it to a refused host is refused at that hop",
  async ({ env, port, seen, internId }) => {
    const before = seen.length;
    const results = await fetchAll(env, internId, "allowed", [
      fetchStep(`http://api.example.test:${port}/page`),
      fetchStep(`http://internal.example.test:${port}/page`),
      fetchStep(`http://api.example.test:${port}/to-internal`),
      fetchStep(`http://api.example.test:${port}/to-loopback`),
    ]);
    assert.is(results[0]!.status, 200);
    assert.is(results[0]!.body, "page /page");
    assert.match(String(results[1]!.error), /request to host internal\.example\.test refused/);
    assert.match(String(results[2]!.error), /redirect to host internal\.example\.test refused/);
    assert.match(String(results[3]!.error), /redirect to host 127\.0\.0\.1 refused/);
    assert.equal(
      seen.slice(before).map((request) => `${request.host} ${request.path}`),
      ["/page", "/to-internal", "/to-loopback"].map((path) => `api.example.test:${port} ${path}`),
      "only the allowed host was called; no redirect target was",
    );
  },
);

test("manual mode asks before a fetch (method and URL, no secret); a refusal sends nothing, an allow sends it", async ({
  env,
  port,
  seen,
  internId,
}) => {
  const value = "manual-secret-8c2d";
  const stored = await call(env.gw.url, "PUT", `/api/v1/vault/interns/${internId}/secrets/manual_token`, {
    key: env.key,
    body: { hosts: ["api.example.test"], value, allow_http: true },
  });
  assert.is(stored.status, 200, stored.text);
  const url = `http://api.example.test:${port}/manual?page=2`;
  env.upstream.scripts.define("ask-fetch", [
    fetchStep(url, { authorization: "Bearer {{secrets.manual_token}}" }),
    { reply: "Result: {{last_tool_result}}" },
  ]);
  const before = seen.length;

  const refused = await pausedQuestion(env, internId, "ask-fetch");
  const args = JSON.parse(
    at(refused.question, "choices", 0, "delta", "tool_calls", 0, "function", "arguments") as string,
  ) as Result;
  assert.equal(args, {
    kind: "permission",
    operation: "fetch",
    command: `GET ${url}`,
    options: ["allow_once", "allow_always", "reject_once", "reject_always"],
  });
  assert.equal(seen.slice(before), [], "nothing was sent before the answer");
  const afterRefusal = await (
    await ChatStream.open(env.gw.url, env.key, internId, answerBody(refused.sessionId, refused.question, "reject_once"))
  ).rest();
  assert.match(contentOf(afterRefusal), /did not allow this request/);
  assert.equal(seen.slice(before), [], "nothing was sent after the refusal");

  const allowed = await pausedQuestion(env, internId, "ask-fetch");
  const afterAllow = await (
    await ChatStream.open(env.gw.url, env.key, internId, answerBody(allowed.sessionId, allowed.question, "allow_once"))
  ).rest();
  assert.match(contentOf(afterAllow), /page \/manual\?page=2/);
  assert.equal(
    seen.slice(before).map((request) => [request.path, request.authorization]),
    [["/manual?page=2", `Bearer ${value}`]],
  );
});

test("a secret goes to an http URL only when stored with allow_http; otherwise the request is not sent", async ({
  env,
  port,
  seen,
  internId,
}) => {
  const store = async (name: string, value: string, allowHttp: boolean) => {
    const stored = await call(env.gw.url, "PUT", `/api/v1/vault/interns/${internId}/secrets/${name}`, {
      key: env.key,
      body: { hosts: ["api.example.test"], value, allow_http: allowHttp },
    });
    assert.is(stored.status, 200, stored.text);
  };
  await store("tls_token", "tls-only-value-41", false);
  await store("plain_token", "plain-ok-value-42", true);
  const before = seen.length;
  const results = await fetchAll(env, internId, "https-rule", [
    fetchStep(`http://api.example.test:${port}/tls`, { authorization: "Bearer {{secrets.tls_token}}" }),
    fetchStep(`http://api.example.test:${port}/plain`, { authorization: "Bearer {{secrets.plain_token}}" }),
  ]);
  assert.match(
    String(results[0]!.error),
    /secret "tls_token" is not released to host api\.example\.test over http .*allow_http.*; nothing was sent/,
  );
  assert.is(results[1]!.status, 200);
  assert.equal(
    seen.slice(before).map((request) => [request.path, request.authorization]),
    [["/plain", "Bearer plain-ok-value-42"]],
    "the https-only secret never left",
  );
});

test.run();
