import { suite } from "../../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call, type Reply } from "../../../support/http.js";
import { createdIntern, startInternsGateway, type InternsEnv, type Json } from "../../../support/interns.js";
import { ISO } from "../../../support/shapes.js";

/** The rules of docs/api/vault.md over REST, table-driven. */
const test = suite<{ env: InternsEnv; internId: string }>("vault rules");
test.before(async (ctx) => {
  ctx.env = await startInternsGateway();
  ctx.internId = (await createdIntern(ctx.env, { name: "vault-rules" })).id as string;
});
test.after(async ({ env }) => {
  await env.stop();
});

const internSecrets = (internId: string) => `/api/v1/vault/interns/${internId}/secrets`;
const put = (env: InternsEnv, route: string, name: string, body: unknown, key = env.main.key) =>
  call(env.gw.url, "PUT", `${route}/${name}`, { key, body });
const names = (res: Reply) => (at(res.body, "data") as Json[]).map((secret) => secret.name);

test("store answers {data} with metadata only: name, hosts, fingerprint, created_at (ms), allow_http", async ({
  env,
  internId,
}) => {
  const res = await put(env, internSecrets(internId), "github_token", {
    hosts: ["api.github.com"],
    value: "ghp_exampleTokenValue",
  });
  assert.is(res.status, 200, res.text);
  const data = at(res.body, "data") as Json;
  assert.equal(Object.keys(data).sort(), ["allow_http", "created_at", "fingerprint", "hosts", "name"]);
  assert.is(data.allow_http, false, "https only unless asked");
  assert.is(data.name, "github_token");
  assert.equal(data.hosts, ["api.github.com"]);
  assert.match(data.fingerprint as string, /^sha256:[0-9a-f]{64}$/);
  assert.match(data.created_at as string, ISO);
  assert.match(data.created_at as string, /\.\d{3}Z$/, "with milliseconds");
  assert.not.ok(res.text.includes("ghp_exampleTokenValue"), "the value is never returned");
  const listed = await call(env.gw.url, "GET", internSecrets(internId), { key: env.main.key });
  assert.not.ok(listed.text.includes("ghp_exampleTokenValue"));
});

test(
  "allow_http: " + "written with the secret, read back by every list and the copy, cleared by a store without it",
  async ({ env }) => {
    const intern = (await createdIntern(env, { name: "plain-http" })).id as string;
    const stored = await put(env, internSecrets(intern), "lan_token", {
      hosts: ["printer.example.com"],
      value: "v",
      allow_http: true,
    });
    assert.is(stored.status, 200, stored.text);
    assert.is(at(stored.body, "data", "allow_http"), true);
    await put(env, "/api/v1/vault/secrets", "http_pool", {
      hosts: ["printer.example.com"],
      value: "w",
      allow_http: true,
    });
    const copied = await call(env.gw.url, "POST", `${internSecrets(intern)}/copy`, {
      key: env.main.key,
      body: { names: ["http_pool"] },
    });
    assert.is(at(copied.body, "data", 0, "allow_http"), true, "the copy keeps it");
    const flags = async (route: string) =>
      Object.fromEntries(
        ((at((await call(env.gw.url, "GET", route, { key: env.main.key })).body, "data") as Json[]) ?? []).map((s) => [
          s.name,
          s.allow_http,
        ]),
      );
    assert.equal(await flags(internSecrets(intern)), { http_pool: true, lan_token: true });
    assert.equal((await flags("/api/v1/vault/secrets")).http_pool, true);
    // Effective secrets include the workspace's, which other tests store too: this test's names only.
    const effective = await flags(`/api/v1/vault/interns/${intern}/effective-secrets`);
    assert.equal(
      { http_pool: effective.http_pool, lan_token: effective.lan_token },
      { http_pool: true, lan_token: true },
    );
    await put(env, internSecrets(intern), "lan_token", { hosts: ["printer.example.com"], value: "v" });
    assert.equal((await flags(internSecrets(intern))).lan_token, false, "storing the name again without it clears it");
    assert.is(
      (
        await put(env, internSecrets(intern), "lan_token", {
          hosts: ["printer.example.com"],
          value: "v",
          allow_http: "yes",
        })
      ).status,
      400,
    );
  },
);

test("names: 1 to 255 lowercase letters, digits and single underscores, from a letter, not ending in _", async ({
  env,
  internId,
}) => {
  const cases: Array<[string, number]> = [
    ["a", 200],
    ["token2", 200],
    ["my_api_key", 200],
    [`a${"b".repeat(254)}`, 200],
    [`a${"b".repeat(255)}`, 400],
    ["Token", 400],
    ["2token", 400],
    ["_token", 400],
    ["token_", 400],
    ["my__key", 400],
    ["my-key", 400],
    ["my%20key", 400],
    ["ключ", 400],
  ];
  for (const [name, status] of cases) {
    const res = await put(env, internSecrets(internId), name, { hosts: ["api.example.com"], value: "v" });
    assert.is(res.status, status, `${name}: ${res.text}`);
    if (status === 400) assert.match(at(res.body, "error", "message") as string, /name/, name);
  }
});

test(
  "hosts: lowercased, trailing dot removed, duplicates collapsed; " + "schemes, ports, paths, wildcards, empty refused",
  async ({ env, internId }) => {
    const stored = (res: Reply) => at(res.body, "data", "hosts");
    const accepted: Array<[string[], string[]]> = [
      [["API.Example.com."], ["api.example.com"]],
      [["api.example.com", "API.EXAMPLE.COM", "api.example.com."], ["api.example.com"]],
      [
        ["b.example.com", "a.example.com"],
        ["b.example.com", "a.example.com"],
      ],
      [["localhost"], ["localhost"]],
      [["10.0.0.7"], ["10.0.0.7"]],
      [
        [`${"x".repeat(63)}.${"y".repeat(63)}.${"z".repeat(63)}.${"w".repeat(61)}`],
        [`${"x".repeat(63)}.${"y".repeat(63)}.${"z".repeat(63)}.${"w".repeat(61)}`],
      ],
      [
        Array.from({ length: 100 }, (_, i) => `h${i}.example.com`),
        Array.from({ length: 100 }, (_, i) => `h${i}.example.com`),
      ],
    ];
    for (const [hosts, expected] of accepted) {
      const res = await put(env, internSecrets(internId), "host_rules", { hosts, value: "v" });
      assert.is(res.status, 200, `${JSON.stringify(hosts)}: ${res.text}`);
      assert.equal(stored(res), expected, JSON.stringify(hosts));
    }
    const refused: Array<[unknown, RegExp]> = [
      [[], /hosts/],
      [undefined, /hosts/],
      [[""], /hosts\[0\]/],
      [["https://api.example.com"], /hosts\[0\]/],
      [["api.example.com:443"], /hosts\[0\]/],
      [["api.example.com/v1"], /hosts\[0\]/],
      [["*.example.com"], /hosts\[0\]/],
      [["api.example.com", "*"], /hosts\[1\]/],
      [["api..example.com"], /hosts\[0\]/],
      [[".example.com"], /hosts\[0\]/],
      [["-api.example.com"], /hosts\[0\]/],
      [["api example.com"], /hosts\[0\]/],
      [["user@api.example.com"], /hosts\[0\]/],
      [["[::1]"], /hosts\[0\]/],
      [[`${"a".repeat(64)}.com`], /hosts\[0\]/],
      [[`${"a.".repeat(127)}ab`], /hosts\[0\]/],
      [Array.from({ length: 101 }, (_, i) => `h${i}.example.com`), /hosts/],
      ["api.example.com", /hosts/],
      [[7], /hosts/],
    ];
    for (const [hosts, message] of refused) {
      const res = await put(env, internSecrets(internId), "host_rules", { hosts, value: "v" });
      assert.is(res.status, 400, `${JSON.stringify(hosts)}: ${res.text}`);
      assert.match(at(res.body, "error", "message") as string, message, JSON.stringify(hosts));
    }
  },
);

test("value: 1 to 65536 characters", async ({ env, internId }) => {
  const cases: Array<[unknown, number]> = [
    ["v", 200],
    ["x".repeat(65_536), 200],
    ["😀".repeat(65_536), 200],
    ["x".repeat(65_537), 400],
    ["", 400],
    [undefined, 400],
    [42, 400],
  ];
  for (const [value, status] of cases) {
    const res = await put(env, internSecrets(internId), "sized", { hosts: ["api.example.com"], value });
    assert.is(res.status, status, `${typeof value === "string" ? value.length : value}: ${res.text.slice(0, 200)}`);
    if (status === 400) assert.match(at(res.body, "error", "message") as string, /value/);
  }
});

test("lists: ordered by name, limit 1-100 (default 100), offset 0-10000, has_more", async ({ env }) => {
  const intern = (await createdIntern(env, { name: "many-secrets" })).id as string;
  const stored = Array.from({ length: 105 }, (_, i) => `s${String(i).padStart(3, "0")}`);
  for (const name of [...stored].reverse())
    assert.is((await put(env, internSecrets(intern), name, { hosts: ["api.example.com"], value: name })).status, 200);
  const list = (query: string) => call(env.gw.url, "GET", `${internSecrets(intern)}${query}`, { key: env.main.key });
  const first = await list("");
  assert.is(first.status, 200, first.text);
  assert.equal(names(first), stored.slice(0, 100), "ordered by name, 100 by default");
  assert.is(at(first.body, "has_more"), true);
  const rest = await list("?offset=100");
  assert.equal(names(rest), stored.slice(100));
  assert.is(at(rest.body, "has_more"), false);
  const middle = await list("?limit=3&offset=50");
  assert.equal(names(middle), stored.slice(50, 53));
  assert.is(at(middle.body, "has_more"), true);
  assert.equal(names(await list("?offset=10000")), []);
  for (const query of ["?limit=0", "?limit=101", "?offset=-1", "?offset=10001", "?limit=abc"]) {
    const res = await list(query);
    assert.is(res.status, 400, `${query}: ${res.text}`);
  }
  // Byte order of names, whatever the database locale: "a_b" sorts before "ab".
  const ordered = (await createdIntern(env, { name: "ordered" })).id as string;
  for (const name of ["ab", "a_b", "a1", "b"])
    await put(env, internSecrets(ordered), name, { hosts: ["api.example.com"], value: "v" });
  assert.equal(names(await call(env.gw.url, "GET", internSecrets(ordered), { key: env.main.key })), [
    "a1",
    "a_b",
    "ab",
    "b",
  ]);
});

test("delete: 204 without body, then 404; workspace secrets likewise", async ({ env, internId }) => {
  await put(env, internSecrets(internId), "doomed", { hosts: ["api.example.com"], value: "v" });
  const res = await call(env.gw.url, "DELETE", `${internSecrets(internId)}/doomed`, { key: env.main.key });
  assert.is(res.status, 204, res.text);
  assert.is(res.text, "");
  assert.is((await call(env.gw.url, "DELETE", `${internSecrets(internId)}/doomed`, { key: env.main.key })).status, 404);
  assert.is(
    (await call(env.gw.url, "DELETE", `${internSecrets(internId)}/Bad_Name`, { key: env.main.key })).status,
    400,
  );

  assert.is(
    (await call(env.gw.url, "DELETE", "/api/v1/vault/secrets/never_stored", { key: env.second.key })).status,
    404,
    "a workspace without a vault yet",
  );
  assert.is(
    (await put(env, "/api/v1/vault/secrets", "shared", { hosts: ["api.example.com"], value: "v" })).status,
    200,
  );
  assert.is((await call(env.gw.url, "DELETE", "/api/v1/vault/secrets/shared", { key: env.main.key })).status, 204);
  assert.is((await call(env.gw.url, "DELETE", "/api/v1/vault/secrets/shared", { key: env.main.key })).status, 404);
});

test(
  "scope: workspace routes act on the key's workspace; " +
    "another workspace's intern is 404; outside the programme 404",
  async ({ env, internId }) => {
    await put(env, "/api/v1/vault/secrets", "main_only", { hosts: ["api.example.com"], value: "v" });
    const secondList = await call(env.gw.url, "GET", "/api/v1/vault/secrets", { key: env.second.key });
    assert.is(secondList.status, 200, secondList.text);
    assert.not.ok(names(secondList).includes("main_only"), "each workspace has its own secrets");
    assert.equal(at(secondList.body, "has_more"), false);

    const routes: Array<[string, string, unknown?]> = [
      ["GET", internSecrets(internId)],
      ["PUT", `${internSecrets(internId)}/x`, { hosts: ["api.example.com"], value: "v" }],
      ["DELETE", `${internSecrets(internId)}/x`],
      ["GET", `/api/v1/vault/interns/${internId}/effective-secrets`],
      ["POST", `${internSecrets(internId)}/copy`, { names: ["main_only"] }],
      ["GET", internSecrets("0b7f3c9e-2d41-4f6a-9e8b-5c1d2a3f4e60")],
    ];
    for (const [method, route, body] of routes) {
      const res = await call(env.gw.url, method, route, { key: env.second.key, ...(body ? { body } : {}) });
      assert.is(res.status, 404, `${method} ${route}: ${res.text}`);
    }
    for (const [method, route, body] of [
      ...routes,
      ["GET", "/api/v1/vault/secrets"],
      ["PUT", "/api/v1/vault/secrets/x", { hosts: ["a.b"], value: "v" }],
    ] as Array<[string, string, unknown?]>) {
      const res = await call(env.gw.url, method, route, { key: env.outsider.key, ...(body ? { body } : {}) });
      assert.is(res.status, 404, `outsider ${method} ${route}: ${res.text}`);
      assert.is(at(res.body, "error", "metadata", "reason"), "not_found");
    }
    assert.is(
      (await call(env.gw.url, "GET", internSecrets("not-a-uuid"), { key: env.main.key })).status,
      400,
      "an intern id is a UUID",
    );
  },
);

test("copy: names workspace secrets into the intern, all or nothing, in the order asked", async ({ env }) => {
  const intern = (await createdIntern(env, { name: "copy-target" })).id as string;
  await put(env, "/api/v1/vault/secrets", "copy_a", { hosts: ["a.example.com", "b.example.com"], value: "value-a" });
  await put(env, "/api/v1/vault/secrets", "copy_b", { hosts: ["b.example.com"], value: "value-b" });
  await put(env, internSecrets(intern), "copy_b", { hosts: ["old.example.com"], value: "old" });
  const copy = (body: unknown) =>
    call(env.gw.url, "POST", `${internSecrets(intern)}/copy`, { key: env.main.key, body });

  const missing = await copy({ names: ["copy_a", "copy_missing"] });
  assert.is(missing.status, 404, missing.text);
  assert.match(at(missing.body, "error", "message") as string, /copy_missing/);
  const before = await call(env.gw.url, "GET", internSecrets(intern), { key: env.main.key });
  assert.equal(names(before), ["copy_b"], "nothing was copied");

  const res = await copy({ names: ["copy_b", "copy_a"] });
  assert.is(res.status, 200, res.text);
  const data = at(res.body, "data") as Json[];
  assert.equal(
    data.map((s) => s.name),
    ["copy_b", "copy_a"],
  );
  assert.equal(
    data.map((s) => s.hosts),
    [["b.example.com"], ["a.example.com", "b.example.com"]],
    "hosts are kept",
  );
  const workspace = await call(env.gw.url, "GET", "/api/v1/vault/secrets", { key: env.main.key });
  const workspaceA = (at(workspace.body, "data") as Json[]).find((s) => s.name === "copy_a")!;
  assert.is.not(data[1]!.fingerprint, workspaceA.fingerprint, "the copy is fingerprinted with the intern's vault key");
  assert.not.ok(res.text.includes("value-a"));
  const after = await call(env.gw.url, "GET", internSecrets(intern), { key: env.main.key });
  assert.equal(
    (at(after.body, "data") as Json[]).map((s) => [s.name, s.hosts]),
    [
      ["copy_a", ["a.example.com", "b.example.com"]],
      ["copy_b", ["b.example.com"]],
    ],
    "the intern's copy_b was replaced",
  );

  const cases: Array<[unknown, number]> = [
    [{ names: [] }, 400],
    [{}, 400],
    [{ names: ["copy_a", "copy_a"] }, 400],
    [{ names: ["Bad"] }, 400],
    [{ names: Array.from({ length: 101 }, (_, i) => `n${i}`) }, 400],
    [{ names: "copy_a" }, 400],
  ];
  for (const [body, status] of cases) assert.is((await copy(body)).status, status, JSON.stringify(body).slice(0, 80));
});

test("effective secrets: the intern's own, then its attached vault, then the workspace's; one per name", async ({
  env,
}) => {
  const lender = (await createdIntern(env, { name: "lender" })) as Json;
  const intern = (await createdIntern(env, { name: "effective", vault_id: lender.vault_id })).id as string;
  await put(env, "/api/v1/vault/secrets", "eff_shared", { hosts: ["workspace.example.com"], value: "w" });
  await put(env, "/api/v1/vault/secrets", "eff_workspace", { hosts: ["workspace.example.com"], value: "w" });
  await put(env, internSecrets(lender.id as string), "eff_shared", { hosts: ["lender.example.com"], value: "l" });
  await put(env, internSecrets(lender.id as string), "eff_lent", { hosts: ["lender.example.com"], value: "l" });
  await put(env, internSecrets(intern), "eff_shared", { hosts: ["intern.example.com"], value: "i" });
  const res = await call(env.gw.url, "GET", `/api/v1/vault/interns/${intern}/effective-secrets`, { key: env.main.key });
  assert.is(res.status, 200, res.text);
  const effective = (at(res.body, "data") as Json[]).filter((s) => (s.name as string).startsWith("eff_"));
  assert.equal(
    effective.map((s) => [s.name, s.scope, s.hosts]),
    [
      ["eff_lent", "attached", ["lender.example.com"]],
      ["eff_shared", "intern", ["intern.example.com"]],
      ["eff_workspace", "workspace", ["workspace.example.com"]],
    ],
  );
  assert.equal(Object.keys(effective[0]!).sort(), [
    "allow_http",
    "created_at",
    "fingerprint",
    "hosts",
    "name",
    "scope",
  ]);
  const page = await call(env.gw.url, "GET", `/api/v1/vault/interns/${intern}/effective-secrets?limit=1`, {
    key: env.main.key,
  });
  assert.is((at(page.body, "data") as Json[]).length, 1);
  assert.is(at(page.body, "has_more"), true);
});

test("503 while vault writes are disabled; reads still work", async () => {
  const disabled = await startInternsGateway({ GATEWAY_VAULT_WRITES_DISABLED: "true" });
  try {
    const intern = (await createdIntern(disabled, { name: "read-only" })).id as string;
    const writes: Array<[string, string, unknown?]> = [
      ["PUT", `${internSecrets(intern)}/token`, { hosts: ["api.example.com"], value: "v" }],
      ["DELETE", `${internSecrets(intern)}/token`],
      ["PUT", "/api/v1/vault/secrets/token", { hosts: ["api.example.com"], value: "v" }],
      ["DELETE", "/api/v1/vault/secrets/token"],
      ["POST", `${internSecrets(intern)}/copy`, { names: ["token"] }],
    ];
    for (const [method, route, body] of writes) {
      const res = await call(disabled.gw.url, method, route, { key: disabled.main.key, ...(body ? { body } : {}) });
      assert.is(res.status, 503, `${method} ${route}: ${res.text}`);
    }
    assert.is((await call(disabled.gw.url, "GET", internSecrets(intern), { key: disabled.main.key })).status, 200);
    assert.is((await call(disabled.gw.url, "GET", "/api/v1/vault/secrets", { key: disabled.main.key })).status, 200);
    const foreign = await call(disabled.gw.url, "PUT", `${internSecrets(intern)}/token`, {
      key: disabled.second.key,
      body: { hosts: ["a.b"], value: "v" },
    });
    assert.is(foreign.status, 404, "out of scope stays 404");
  } finally {
    await disabled.stop();
  }
});

test.run();
