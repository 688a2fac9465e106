import { generateKeyPairSync } from "node:crypto";
import * as assert from "uvu/assert";
import { CLOUD_PLATFORM_SCOPE } from "../../../server/engine/providers/google/access-tokens.js";
import { googleChat } from "../../../server/engine/providers/google/chat.js";
import type { GoogleServiceAccount, UpstreamTarget } from "../../../server/engine/providers/provider.js";
import type { MockUpstream } from "../../upstream/mock-upstream.js";
import { collect, contentOf, failure, mockSuite, signal, targetFor } from "./adapter-helpers.js";

/**
 * Vertex AI: calls carry a service account's OAuth token, exchanged at the mock's token endpoint
 * by google-auth-library, kept across calls, and exchanged again once after a 401.
 */
const test = mockSuite("providers: Google (Vertex AI) service account tokens");

const MODEL = "gemini-mock";
const hi = { messages: [{ role: "user", content: "hi" }] };
const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});

// Tokens are kept per service account for the life of the process: each test has its own account.
let accounts = 0;
function vertex(
  mock: MockUpstream,
  clientEmail = `gateway-${++accounts}@project.iam.gserviceaccount.com`,
): UpstreamTarget {
  const account: GoogleServiceAccount = { clientEmail, privateKey, tokenUri: `${mock.url}/google/token` };
  return targetFor(mock, "google", MODEL, {
    baseUrl: mock.googleBaseUrl,
    apiKey: privateKey,
    settings: { googleServiceAccount: account },
  });
}

const paths = (mock: MockUpstream) =>
  mock.requests.map((request) => request.path.replace(/^\/google\/v1beta\/models\//, ""));

test("the token comes from the account's token endpoint, goes as a bearer token, and serves later calls", async ({
  mock,
}) => {
  const target = vertex(mock);
  await googleChat.chat(target, hi, signal());
  const stream = await googleChat.chatStream(target, hi, signal());
  assert.is(contentOf(await collect(stream)), `Hello from ${MODEL}`);
  assert.equal(paths(mock), ["/google/token", `${MODEL}:generateContent`, `${MODEL}:streamGenerateContent?alt=sse`]);
  for (const call of mock.requests.slice(1)) {
    assert.is(call.headers.authorization, "Bearer mock-upstream-key-vertex-1");
    assert.is(call.headers["x-goog-api-key"], undefined);
  }
  const exchange = mock.requests[0]?.body as Record<string, string>;
  assert.is(exchange.grant_type, "urn:ietf:params:oauth:grant-type:jwt-bearer");
  const claims = JSON.parse(
    Buffer.from(exchange.assertion?.split(".")[1] ?? "", "base64url").toString("utf8"),
  ) as Record<string, unknown>;
  assert.is(claims.iss, target.settings?.googleServiceAccount?.clientEmail);
  assert.is(claims.scope, CLOUD_PLATFORM_SCOPE);
  assert.is(claims.aud, `${mock.url}/google/token`);
});

test("a 401 from the API drops the token: exactly one new exchange and one retry", async ({ mock }) => {
  const target = vertex(mock);
  mock.rule({ model: MODEL, status: 401, times: 1 });
  const result = await googleChat.chat(target, hi, signal());
  assert.is(result.body.object, "chat.completion");
  assert.equal(paths(mock), ["/google/token", `${MODEL}:generateContent`, "/google/token", `${MODEL}:generateContent`]);
  assert.is(mock.requests[1]?.headers.authorization, "Bearer mock-upstream-key-vertex-1");
  assert.is(mock.requests[3]?.headers.authorization, "Bearer mock-upstream-key-vertex-3");

  // The fresh token serves the next call.
  await googleChat.chat(target, hi, signal());
  assert.is(mock.requests.length, 5);
  assert.is(mock.requests[4]?.headers.authorization, "Bearer mock-upstream-key-vertex-3");
});

test("a 401 that persists fails after the one retry", async ({ mock }) => {
  mock.rule({ model: MODEL, status: 401 });
  const error = await failure(googleChat.chat(vertex(mock), hi, signal()));
  assert.equal([error.failure, error.options.status], ["status", 401]);
  assert.equal(paths(mock), ["/google/token", `${MODEL}:generateContent`, "/google/token", `${MODEL}:generateContent`]);
});

test("an account the token endpoint refuses fails as 401 without calling the API or showing the key", async ({
  mock,
}) => {
  const error = await failure(googleChat.chat(vertex(mock, "not-a-service-account"), hi, signal()));
  assert.equal([error.failure, error.options.status], ["status", 401]);
  assert.not.match(error.message, "PRIVATE KEY");
  assert.equal(paths(mock), ["/google/token"]);
});

test.run();
