import http from "node:http";
import type { AddressInfo } from "node:net";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import {
  ChatStream,
  contentOf,
  runningInternId,
  startRuntimeGateway,
  type RuntimeEnv,
} from "../../support/intern-runtime.js";

/**
 * Host binding of vault secrets in the intern's fetch tool (docs/api/vault.md): a second local HTTP server
 * stands for several hostnames (GATEWAY_INTERN_FETCH_RESOLVE points them all at it, and
 * GATEWAY_INTERN_FETCH_ALLOWED_HOSTS lets the tool call them at that loopback address) and records
 * which requests carried the secret. Only requests to exactly the secret's host do; its parent
 * domain, a sub-domain and a redirect to another host never get it, and the model never sees it.
 * The server speaks plain http, so the secrets are stored with allow_http.
 */
interface Seen {
  host: string;
  path: string;
  authorization: string | undefined;
}

const SECRET = "s3cr3t-value-0123456789";
/** A value that a URL carries percent-encoded. */
const SPECIAL = "tok/en+with=chars&more";
const BODY_BYTES = 4096;
const test = suite<{ env: RuntimeEnv; target: http.Server; port: number; seen: Seen[] }>(
  "interns: fetch tool and host-bound secrets",
);

const token = (req: http.IncomingMessage) => (req.headers.authorization ?? "").replace(/^Bearer /, "");

test.before(async (context) => {
  context.seen = [];
  context.target = http.createServer((req, res) => {
    context.seen.push({ host: req.headers.host ?? "", path: req.url ?? "", authorization: req.headers.authorization });
    const port = context.port;
    if (req.url === "/away") res.writeHead(302, { location: `http://other.example.test:${port}/landing` }).end();
    else if (req.url === "/same") res.writeHead(302, { location: "/landing" }).end();
    else if (req.url === "/echo")
      res.writeHead(200, { "content-type": "text/plain" }).end(`you sent ${req.headers.authorization}`);
    // Servers that echo the token back where the tool does not look at a body: a redirect's URL, or
    // past the body's cut.
    else if (req.url === "/redirect-echo") res.writeHead(302, { location: `/landing?token=${token(req)}` }).end();
    else if (req.url === "/redirect-away-echo")
      res
        .writeHead(302, { location: `http://other.example.test:${port}/cb?token=${encodeURIComponent(token(req))}` })
        .end();
    else if (req.url === "/long-echo")
      res.writeHead(200, { "content-type": "text/plain" }).end(`${"x".repeat(BODY_BYTES - 5)}${token(req)} and more`);
    else res.writeHead(200, { "content-type": "text/plain" }).end(`page ${req.url} of ${req.headers.host}`);
  });
  await new Promise<void>((resolve) => context.target.listen(0, "127.0.0.1", resolve));
  context.port = (context.target.address() as AddressInfo).port;
  const names = ["api.example.test", "example.test", "sub.api.example.test", "other.example.test"];
  context.env = await startRuntimeGateway({
    GATEWAY_INTERN_FETCH_RESOLVE: names.map((name) => `${name}=127.0.0.1`).join(","),
    GATEWAY_INTERN_FETCH_ALLOWED_HOSTS: names.join(","),
    GATEWAY_INTERN_FETCH_BODY_BYTES: String(BODY_BYTES),
  });
});
test.after(async ({ env, target }) => {
  await env.stop();
  target.closeAllConnections();
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

test(
  "a secret is filled in only for exactly its host; " +
    "parent, sub-domain and cross-host redirects never get it; the model never sees it",
  async ({ env, port, seen }) => {
    const internId = await runningInternId(env, "fetcher");
    const stored = await call(env.gw.url, "PUT", `/api/v1/vault/interns/${internId}/secrets/api_token`, {
      key: env.key,
      body: { hosts: ["api.example.test"], value: SECRET, allow_http: true },
    });
    assert.is(stored.status, 200, stored.text);

    const withSecret = { authorization: "Bearer {{secrets.api_token}}" };
    const fetchStep = (url: string, headers: Record<string, string> = withSecret) => ({
      toolCall: { name: "fetch", arguments: JSON.stringify({ url, headers }) },
    });
    env.upstream.scripts.define("fetching", [
      fetchStep(`http://api.example.test:${port}/data`),
      fetchStep(`http://example.test:${port}/data`),
      fetchStep(`http://sub.api.example.test:${port}/data`),
      fetchStep(`http://api.example.test:${port}/away`),
      fetchStep(`http://api.example.test:${port}/same`),
      fetchStep(`http://api.example.test:${port}/echo`),
      fetchStep(`http://example.test:${port}/plain`, {}),
      { reply: "all fetched" },
    ]);
    env.upstream.requests.length = 0;
    const stream = await ChatStream.open(env.gw.url, env.key, internId, {
      stream: true,
      messages: [{ role: "user", content: "[script:fetching] fetch things" }],
    });
    assert.is(contentOf(await stream.rest()), "all fetched");

    const carrying = seen.filter((request) => request.authorization?.includes(SECRET));
    assert.equal(
      carrying.map((request) => `${request.host}${request.path}`),
      ["/data", "/away", "/same", "/landing", "/echo"].map((p) => `api.example.test:${port}${p}`),
      "the secret went to exactly its host, a same-host redirect included",
    );
    assert.not.ok(
      seen.some((request) => request.host.startsWith("sub.api.example.test")),
      "nothing was sent to the sub-domain",
    );
    assert.not.ok(
      seen.some((request) => request.host.startsWith("other.example.test")),
      "the cross-host redirect was not followed",
    );
    assert.equal(
      seen
        .filter((request) => request.host.startsWith("example.test"))
        .map((request) => [request.path, request.authorization]),
      [["/plain", undefined]],
      "the parent domain got only the request without secrets",
    );

    // What went back to the model: refusals, the unfollowed redirect, and the echo masked.
    const everything = JSON.stringify(env.upstream.requests.map((request) => request.body));
    assert.not.ok(everything.includes(SECRET), "the secret's value never reached the model");
    const messages = at(env.upstream.requests.at(-1)?.body, "messages") as Array<Record<string, unknown>>;
    const results = messages
      .filter((message) => message.role === "tool")
      .map((message) => JSON.parse(message.content as string) as Record<string, unknown>);
    assert.is(results.length, 7);
    assert.is(results[0]!.status, 200);
    assert.match(String(results[1]!.error), /not released to host example\.test/);
    assert.match(String(results[2]!.error), /not released to host sub\.api\.example\.test/);
    assert.is(results[3]!.status, 302);
    assert.match(String(results[3]!.note), /not followed/);
    assert.is(results[4]!.status, 200);
    assert.match(String(results[4]!.body), /page \/landing/);
    assert.is(results[5]!.body, "you sent Bearer {{secrets.api_token}}");
    assert.is(results[6]!.status, 200);
  },
);

test("a secret in the URL is refused; an unknown secret name sends nothing", async ({ env, port, seen }) => {
  const internId = await runningInternId(env, "careful");
  const before = seen.length;
  env.upstream.scripts.define("bad-fetches", [
    {
      toolCall: {
        name: "fetch",
        arguments: JSON.stringify({ url: `http://api.example.test:${port}/q?key={{secrets.api_token}}` }),
      },
    },
    {
      toolCall: {
        name: "fetch",
        arguments: JSON.stringify({
          url: `http://api.example.test:${port}/data`,
          headers: { authorization: "{{secrets.nope}}" },
        }),
      },
    },
    { reply: "{{last_tool_result}}" },
  ]);
  env.upstream.requests.length = 0;
  const stream = await ChatStream.open(env.gw.url, env.key, internId, {
    stream: true,
    messages: [{ role: "user", content: "[script:bad-fetches] try" }],
  });
  assert.match(contentOf(await stream.rest()), /nope\\?" is not released/);
  assert.is(seen.length, before, "nothing was sent");
  const messages = at(env.upstream.requests.at(-1)?.body, "messages") as Array<Record<string, unknown>>;
  assert.match(String(messages.find((message) => message.role === "tool")?.content), /never into the URL/);
});

test("echoes in a redirect's URL, a shown Location header and across the body's cut come back as placeholders", async ({
  env,
  port,
}) => {
  const internId = await runningInternId(env, "echoed");
  for (const [name, value] of [
    ["api_token", SECRET],
    ["api_special", SPECIAL],
  ]) {
    const stored = await call(env.gw.url, "PUT", `/api/v1/vault/interns/${internId}/secrets/${name}`, {
      key: env.key,
      body: { hosts: ["api.example.test"], value, allow_http: true },
    });
    assert.is(stored.status, 200, stored.text);
  }
  const fetchStep = (path: string, secret: string) => ({
    toolCall: {
      name: "fetch",
      arguments: JSON.stringify({
        url: `http://api.example.test:${port}${path}`,
        headers: { authorization: `Bearer {{secrets.${secret}}}` },
      }),
    },
  });
  env.upstream.scripts.define("echoes", [
    fetchStep("/redirect-echo", "api_token"),
    fetchStep("/redirect-away-echo", "api_special"),
    fetchStep("/long-echo", "api_token"),
    { reply: "echoes fetched" },
  ]);
  env.upstream.requests.length = 0;
  const stream = await ChatStream.open(env.gw.url, env.key, internId, {
    stream: true,
    messages: [{ role: "user", content: "[script:echoes] fetch echoes" }],
  });
  assert.is(contentOf(await stream.rest()), "echoes fetched");

  const messages = at(env.upstream.requests.at(-1)?.body, "messages") as Array<Record<string, unknown>>;
  const results = messages
    .filter((message) => message.role === "tool")
    .map((message) => JSON.parse(message.content as string) as Record<string, unknown>);
  assert.is(results.length, 3);
  assert.is(results[0]!.status, 200);
  assert.is(
    results[0]!.url,
    `http://api.example.test:${port}/landing?token={{secrets.api_token}}`,
    "the followed redirect's URL",
  );
  assert.is(results[1]!.status, 302);
  assert.is(
    at(results[1], "headers", "location"),
    `http://other.example.test:${port}/cb?token={{secrets.api_special}}`,
    "the unfollowed redirect's Location, percent-encoded there",
  );
  const cut = String(results[2]!.body);
  assert.is(
    cut.replace(/^x+/, ""),
    "{{secrets.api_token}}",
    "the value the cut splits is masked whole, and nothing after it is shown",
  );
  assert.is(cut.indexOf("{"), BODY_BYTES - 5, "everything before it is shown");
  assert.is(results[2]!.truncated, true);

  const everything = JSON.stringify(env.upstream.requests.map((request) => request.body));
  for (const form of [SECRET, SPECIAL, encodeURIComponent(SPECIAL), SECRET.slice(0, 5)])
    assert.not.ok(everything.includes(form), `${form} reached the model`);
});

test.run();
