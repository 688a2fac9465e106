import { suite } from "../../../support/suite.js";
import * as assert from "uvu/assert";
import { secretsForUrl } from "../../../../server/services/interns/vault/vault-release.js";
import { call } from "../../../support/http.js";
import {
  createdIntern,
  hasStatus,
  runningIntern,
  startInternsGateway,
  waitForIntern,
  type InternsEnv,
} from "../../../support/interns.js";

/**
 * Release to the intern's HTTP tool (docs/api/vault.md): a secret goes only to exactly the hostnames it is
 * bound to, never to a parent domain, a sub-domain or another host; and to http URLs only when it
 * is stored with allow_http.
 */
const test = suite<{ env: InternsEnv; internId: string; borrowerId: string }>("vault release");
test.before(async (ctx) => {
  const env = (ctx.env = await startInternsGateway());
  const lender = await createdIntern(env, { name: "lender" });
  const intern = await runningIntern(env, "releaser");
  const borrower = await createdIntern(env, { name: "borrower", vault_id: lender.vault_id, provision: true });
  await waitForIntern(env, borrower.id as string, hasStatus("running"));
  ctx.internId = intern.id as string;
  const own = `/api/v1/vault/interns/${ctx.internId}/secrets`;
  const store = async (route: string, name: string, hosts: string[], value = `${name}-value`, allowHttp = false) => {
    const res = await call(env.gw.url, "PUT", `${route}/${name}`, {
      key: env.main.key,
      body: { hosts, value, allow_http: allowHttp },
    });
    if (res.status !== 200) throw new Error(res.text);
  };
  await store(own, "exact", ["api.example.com"]);
  await store(own, "multi", ["a.example.com", "B.Example.com."]);
  await store(own, "parent", ["example.com"]);
  await store(own, "ip", ["10.0.0.7"], "ip-value", true);
  await store(own, "plain", ["plain.example.com"], "plain-value", true);
  await store(own, "tls_only", ["plain.example.com"], "intern-tls-only");
  await store("/api/v1/vault/secrets", "tls_only", ["plain.example.com"], "workspace-plain", true);
  await store(own, "shadow", ["intern.example.com"], "intern-shadow");
  await store("/api/v1/vault/secrets", "shadow", ["api.example.com"], "workspace-shadow");
  await store("/api/v1/vault/secrets", "ws_only", ["api.example.com"]);
  await store(`/api/v1/vault/interns/${lender.id as string}/secrets`, "lent", ["lent.example.com"]);
  await store(`/api/v1/vault/interns/${lender.id as string}/secrets`, "exact", ["lent.example.com"], "lender-exact");
  ctx.borrowerId = borrower.id as string;
});
test.after(async ({ env }) => {
  await env.stop();
});

const release = async (env: InternsEnv, internId: string, url: string) =>
  (await secretsForUrl(env.gw.gateway.deps, internId, url)).map((secret) => `${secret.name}=${secret.value}`).sort();

test("exactly the URL's hostname, normalized; never a parent, a sub-domain or a look-alike", async ({
  env,
  internId,
}) => {
  const cases: Array<[string, string[]]> = [
    ["https://api.example.com/v1/repos", ["exact=exact-value", "ws_only=ws_only-value"]],
    ["https://API.Example.COM/", ["exact=exact-value", "ws_only=ws_only-value"]],
    ["https://api.example.com./", ["exact=exact-value", "ws_only=ws_only-value"]],
    ["https://api.example.com:8443/x", ["exact=exact-value", "ws_only=ws_only-value"]],
    ["http://api.example.com/", []],
    ["https://user:pass@api.example.com/", ["exact=exact-value", "ws_only=ws_only-value"]],
    ["https://api%2Eexample.com/", ["exact=exact-value", "ws_only=ws_only-value"]],
    ["https://example.com/", ["parent=parent-value"]],
    ["https://sub.api.example.com/", []],
    ["https://www.example.com/", []],
    ["https://evil-api.example.com/", []],
    ["https://api.example.com.evil.test/", []],
    ["https://apiexample.com/", []],
    ["https://b.example.com/", ["multi=multi-value"]],
    ["https://a.example.com/", ["multi=multi-value"]],
    ["http://10.0.0.7/", ["ip=ip-value"]],
    ["http://10.0.0.7:8080/", ["ip=ip-value"]],
    ["http://10.0.0.70/", []],
    ["http://0x0a000007/", ["ip=ip-value"]],
    ["http://10.0.0.7.nip.io/", []],
    ["http://[::1]/", []],
    ["https://intern.example.com/", ["shadow=intern-shadow"]],
    ["ftp://api.example.com/", []],
    ["file:///etc/passwd", []],
    ["not a url", []],
    ["https://lent.example.com/", []],
  ];
  for (const [url, expected] of cases) assert.equal(await release(env, internId, url), expected, url);
});

test(
  "over http only the secrets stored with allow_http; " + "an https-only secret still hides a broader one of its name",
  async ({ env, internId }) => {
    assert.equal(await release(env, internId, "https://plain.example.com/"), [
      "plain=plain-value",
      "tls_only=intern-tls-only",
    ]);
    assert.equal(await release(env, internId, "http://plain.example.com/"), ["plain=plain-value"]);
    assert.equal(await release(env, internId, "http://api.example.com/"), [], "exact and ws_only are https-only");
    assert.equal(await release(env, internId, "https://api.example.com/"), [
      "exact=exact-value",
      "ws_only=ws_only-value",
    ]);
  },
);

test("an intern secret of a name hides the workspace's of that name, wherever each is bound", async ({
  env,
  internId,
}) => {
  assert.not.ok(
    (await release(env, internId, "https://api.example.com/")).some((s) => s.startsWith("shadow=")),
    "the intern's shadow is bound elsewhere",
  );
});

test("an attached vault sits between the intern's own and the workspace's", async ({ env, borrowerId }) => {
  assert.equal(await release(env, borrowerId, "https://lent.example.com/"), ["exact=lender-exact", "lent=lent-value"]);
  assert.equal(
    await release(env, borrowerId, "https://api.example.com/"),
    ["shadow=workspace-shadow", "ws_only=ws_only-value"],
    "the lender's exact is bound to lent.example.com only",
  );
});

test("nothing for an intern that is not running, unknown or malformed", async ({ env, internId }) => {
  const queued = await createdIntern(env, { name: "queued-one" });
  await call(env.gw.url, "PUT", `/api/v1/vault/interns/${queued.id as string}/secrets/exact`, {
    key: env.main.key,
    body: { hosts: ["api.example.com"], value: "v" },
  });
  assert.equal(await release(env, queued.id as string, "https://api.example.com/"), []);
  assert.equal(await release(env, "0b7f3c9e-2d41-4f6a-9e8b-5c1d2a3f4e60", "https://api.example.com/"), []);
  assert.equal(await release(env, "not-an-id", "https://api.example.com/"), []);
  assert.ok((await release(env, internId, "https://api.example.com/")).length > 0, "the running intern does get them");
});

test.run();
