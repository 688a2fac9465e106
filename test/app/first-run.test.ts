import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { loadConfig } from "../../server/platform/config.js";
import { startTestGateway, type TestGateway } from "../support/gateway.js";
import { call } from "../support/http.js";

/**
 * A fresh install answers the whole API with the key it prints: its first organization is in the
 * interns programme and has private endpoints (GATEWAY_BOOTSTRAP_ENTITLEMENTS, default both).
 * Gateways are started one after another: one per test file at a time.
 */
const test = suite("first run");

async function statuses(env: Record<string, string>): Promise<{ interns: number; privateEndpoints: number }> {
  const gw: TestGateway = await startTestGateway(env);
  try {
    const interns = await call(gw.url, "GET", "/api/v1/interns", { key: gw.key });
    const privateEndpoints = await call(gw.url, "GET", "/api/v1/private-endpoints", { key: gw.key });
    return { interns: interns.status, privateEndpoints: privateEndpoints.status };
  } finally {
    await gw.stop();
  }
}

test(
  "by default the first organization has both entitlements: " + "GET /interns and GET /private-endpoints answer 200",
  async () => {
    assert.equal(await statuses({}), { interns: 200, privateEndpoints: 200 });
  },
);

test("GATEWAY_BOOTSTRAP_ENTITLEMENTS chooses them; none turns them off", async () => {
  assert.equal(await statuses({ GATEWAY_BOOTSTRAP_ENTITLEMENTS: "interns" }), { interns: 200, privateEndpoints: 403 });
  assert.equal(await statuses({ GATEWAY_BOOTSTRAP_ENTITLEMENTS: "none" }), { interns: 404, privateEndpoints: 403 });
});

test(
  "GATEWAY_BOOTSTRAP_ENTITLEMENTS: a comma list of interns and private-endpoints, or none; " +
    "anything else stops the start",
  () => {
    assert.equal(loadConfig({}).bootstrapEntitlements, ["interns", "private_endpoints"]);
    assert.equal(
      loadConfig({ GATEWAY_BOOTSTRAP_ENTITLEMENTS: " Private-Endpoints , interns " }).bootstrapEntitlements,
      ["private_endpoints", "interns"],
    );
    assert.equal(loadConfig({ GATEWAY_BOOTSTRAP_ENTITLEMENTS: "none" }).bootstrapEntitlements, []);
    assert.throws(
      () => loadConfig({ GATEWAY_BOOTSTRAP_ENTITLEMENTS: "interns,vault" }),
      /GATEWAY_BOOTSTRAP_ENTITLEMENTS must be .*"vault"/,
    );
    assert.throws(
      () => loadConfig({ GATEWAY_OWNER_EMAIL: "not an email" }),
      /GATEWAY_OWNER_EMAIL must be an email address/,
    );
  },
);

test.run();
