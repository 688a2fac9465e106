import * as assert from "uvu/assert";
import { suite } from "../../support/suite.js";
import {
  expectedShapeName,
  hasExpectedShape,
  testCall,
} from "../../../server/services/private-endpoints/provider-dialects.js";
import type { ProviderKind } from "../../../server/engine/providers/provider-kind.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * Private endpoint validation's test call for every provider kind (each kind's probe.ts), sent to
 * our mock of that provider's wire format at the root a user names: the provider accepts it with
 * the workspace's key, answers the shape validation looks for, and refuses another key.
 */
const test = suite<{ mock: MockUpstream }>("private endpoints: the test call of every provider kind");
test.before(async (ctx) => {
  ctx.mock = await startMockUpstream();
});
test.after(async (ctx) => {
  await ctx.mock.close();
});

const ROOTS: Record<ProviderKind, (mock: MockUpstream) => string> = {
  openai: (mock) => mock.openaiBaseUrl,
  anthropic: (mock) => `${mock.url}/anthropic`,
  azure: (mock) => mock.azureBaseUrl,
  google: (mock) => `${mock.url}/google`,
  bedrock: (mock) => mock.bedrockBaseUrl,
};

for (const kind of Object.keys(ROOTS) as ProviderKind[]) {
  test(`${kind}: the provider answers the test call with ${expectedShapeName(kind)}; another key is refused`, async ({
    mock,
  }) => {
    const send = async (credential: string) => {
      const probe = testCall(kind, ROOTS[kind](mock), "probe-model", credential);
      const res = await fetch(probe.url, { method: "POST", headers: probe.headers, body: probe.body });
      return { status: res.status, body: (await res.json()) as unknown };
    };
    const answered = await send(mock.apiKey);
    assert.is(answered.status, 200, JSON.stringify(answered.body));
    assert.ok(hasExpectedShape(kind, answered.body), JSON.stringify(answered.body));
    // Bedrock refuses a token it does not know with 403, as AWS does; the others with 401.
    assert.is((await send("not-the-workspace-key")).status, kind === "bedrock" ? 403 : 401);
  });
}

test.run();
