import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { eventually } from "../../support/eventually.js";
import { filesUnder, startFilesGateway, type FilesGateway } from "../../support/file-gateway.js";
import { exe, pdf, png, TEXTS, wav } from "../../support/file-samples.js";
import { downloadFile, pausedUpload, streamUpload, uploadFile } from "../../support/file-uploads.js";

/**
 * `provider=openai|anthropic`: the file is stored on, read from, listed on and deleted from that
 * provider's Files API with the workspace's own (BYOK) key. The gateway still detects and enforces
 * the type and size first, so the provider only ever receives complete, accepted files.
 */
interface Context {
  env: FilesGateway;
  /** A workspace without own keys, and one whose OpenAI key the provider refuses. */
  keyless: string;
  badKey: string;
}

const test = suite<Context>("files on providers");
test.before(async (ctx) => {
  ctx.env = await startFilesGateway();
  const { url, key } = ctx.env.gw;
  for (const provider of ["openai", "anthropic"]) {
    const byok = await call(url, "POST", "/api/v1/byok", { key, body: { provider, key: ctx.env.upstream.apiKey } });
    assert.is(byok.status < 300, true, byok.text);
  }
  ctx.keyless = String(
    at(
      (await call(url, "POST", "/api/v1/workspaces", { key, body: { name: "No keys", slug: "no-keys" } })).body,
      "data",
      "id",
    ),
  );
  ctx.badKey = String(
    at(
      (await call(url, "POST", "/api/v1/workspaces", { key, body: { name: "Bad key", slug: "bad-key" } })).body,
      "data",
      "id",
    ),
  );
  await call(url, "POST", "/api/v1/byok", {
    key,
    body: { provider: "openai", key: "sk-not-accepted-anywhere", workspace_id: ctx.badKey },
  });
});
test.after(async (ctx) => ctx.env.stop());
test.before.each(({ env }) => env.upstream.reset());

const spooled = (env: FilesGateway) => filesUnder(path.join(env.dataDir, "spool"));

test("without an own key for the provider: 400 saying so, and nothing is sent anywhere", async ({ env, keyless }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, png(), { query: { provider: "openai", workspace_id: keyless } });
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /own OpenAI key/);
  assert.is(env.upstream.files.uploads, 0);
  for (const path of [
    "/api/v1/files?provider=anthropic",
    "/api/v1/files/file_x?provider=anthropic",
    "/api/v1/files/file_x/content?provider=openai",
  ]) {
    const read = await call(env.gw.url, "GET", `${path}&workspace_id=${keyless}`, { key: env.gw.key });
    assert.is(read.status, 400, `${path}: ${read.text}`);
  }
});

test("OpenAI: the upload carries purpose user_data and the detected type; get and list report it", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, Buffer.from(TEXTS.csv), {
    filename: "table.png",
    contentType: "image/png",
    query: { provider: "openai" },
  });
  assert.is(res.status, 201, res.text);
  const id = String(at(res.body, "id"));
  assert.match(id, /^file-user\d+$/);
  assert.is(at(res.body, "mime_type"), "text/csv");
  assert.is(at(res.body, "size_bytes"), Buffer.byteLength(TEXTS.csv));
  assert.is(at(res.body, "downloadable"), false);
  const stored = env.upstream.files.stored.get(id)!;
  assert.is(stored.purpose, "user_data");
  assert.is(stored.filename, "table.png");
  assert.is(stored.mimeType, "text/csv");
  assert.is(stored.bytes.toString(), TEXTS.csv);

  const got = await call(env.gw.url, "GET", `/api/v1/files/${id}?provider=openai`, { key: env.gw.key });
  assert.is(got.status, 200, got.text);
  assert.equal(got.body, res.body);
  // A file put there by other means: OpenAI reports no type, and the gateway never saw the bytes.
  const foreign = env.upstream.files.add({
    provider: "openai",
    filename: "results.jsonl",
    mimeType: "application/jsonl",
    bytes: Buffer.from("{}\n"),
    purpose: "batch_output",
  });
  const list = await call(env.gw.url, "GET", "/api/v1/files?provider=openai", { key: env.gw.key });
  assert.is(list.status, 200, list.text);
  const data = at(list.body, "data") as Array<{ id: string; mime_type: string; downloadable: boolean }>;
  assert.equal(
    data.map((f) => f.id),
    [foreign.id, id],
  );
  assert.is(data[0]!.mime_type, "application/octet-stream");
  assert.is(data[0]!.downloadable, true);
  assert.is(data[1]!.mime_type, "text/csv");
});

test("OpenAI: content OpenAI hands back streams through; content it keeps is the provider's refusal", async ({
  env,
}) => {
  const output = env.upstream.files.add({
    provider: "openai",
    filename: "out.jsonl",
    mimeType: "application/jsonl",
    bytes: Buffer.from('{"a":1}\n'),
    purpose: "batch_output",
  });
  const content = await downloadFile(env.gw.url, env.gw.key, output.id, { provider: "openai" });
  assert.is(content.status, 200);
  assert.is(content.bytes.toString(), '{"a":1}\n');
  const up = await uploadFile(env.gw.url, env.gw.key, pdf(), { query: { provider: "openai" } });
  const refused = await downloadFile(env.gw.url, env.gw.key, String(at(up.body, "id")), { provider: "openai" });
  assert.is(refused.status, 400);
  assert.match(refused.bytes.toString(), /Not allowed to download files of purpose: user_data/);
});

test("OpenAI: DELETE removes the file there; then it is a 404", async ({ env }) => {
  const up = await uploadFile(env.gw.url, env.gw.key, png(), { query: { provider: "openai" } });
  const id = String(at(up.body, "id"));
  const deleted = await call(env.gw.url, "DELETE", `/api/v1/files/${id}?provider=openai`, { key: env.gw.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(deleted.body, { id, type: "file", deleted: true });
  assert.is(env.upstream.files.stored.has(id), false);
  assert.is((await call(env.gw.url, "GET", `/api/v1/files/${id}?provider=openai`, { key: env.gw.key })).status, 404);
  assert.is((await call(env.gw.url, "DELETE", `/api/v1/files/${id}?provider=openai`, { key: env.gw.key })).status, 404);
});

test("Anthropic: upload, get, downloadable content, list pages with the cursor, delete", async ({ env }) => {
  const up = await uploadFile(env.gw.url, env.gw.key, Buffer.from(TEXTS.json), {
    filename: "data.txt",
    query: { provider: "anthropic" },
  });
  assert.is(up.status, 201, up.text);
  const id = String(at(up.body, "id"));
  assert.match(id, /^file_mock\d+$/);
  assert.is(at(up.body, "mime_type"), "application/json");
  assert.is(at(up.body, "downloadable"), false);
  assert.equal(
    (await call(env.gw.url, "GET", `/api/v1/files/${id}?provider=anthropic`, { key: env.gw.key })).body,
    up.body,
  );

  const made = env.upstream.files.add({
    provider: "anthropic",
    filename: "chart.png",
    mimeType: "image/png",
    bytes: png(),
    downloadable: true,
  });
  const content = await downloadFile(env.gw.url, env.gw.key, made.id, { provider: "anthropic" });
  assert.is(content.status, 200);
  assert.is(content.headers.get("content-type"), "image/png");
  assert.ok(content.bytes.equals(png()));
  const notDownloadable = await downloadFile(env.gw.url, env.gw.key, id, { provider: "anthropic" });
  assert.is(notDownloadable.status, 400);

  env.upstream.files.add({
    provider: "anthropic",
    filename: "third.txt",
    mimeType: "text/plain",
    bytes: Buffer.from("x"),
  });
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(
      env.gw.url,
      "GET",
      `/api/v1/files?provider=anthropic&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
      { key: env.gw.key },
    );
    assert.is(page.status, 200, page.text);
    seen.push(...(at(page.body, "data") as Array<{ id: string }>).map((f) => f.id));
    cursor = (at(page.body, "cursor") as string | null) ?? undefined;
  } while (cursor);
  assert.is(seen.length, 3);
  assert.is(seen.at(-1), id, "newest first");

  assert.is(
    (await call(env.gw.url, "DELETE", `/api/v1/files/${id}?provider=anthropic`, { key: env.gw.key })).status,
    200,
  );
  assert.is(env.upstream.files.stored.has(id), false);
});

test("a key the provider refuses is a 502 naming the workspace's own key", async ({ env, badKey }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, png(), { query: { provider: "openai", workspace_id: badKey } });
  assert.is(res.status, 502, res.text);
  assert.match(String(at(res.body, "error", "message")), /own key/);
  assert.not.match(res.text, /sk-not-accepted/);
  await eventually(() => spooled(env), "the spooled upload is removed", { until: (files) => files.length === 0 });
});

test(
  "the provider only receives accepted, complete files: " +
    "refused types, oversize and abandoned uploads never reach it",
  async ({ env }) => {
    const refused = await uploadFile(env.gw.url, env.gw.key, exe(), { query: { provider: "anthropic" } });
    assert.is(refused.status, 400, refused.text);
    const tooLarge = await streamUpload(env.gw.url, env.gw.key, {
      head: wav(),
      size: 104_857_601,
      query: { provider: "openai" },
    });
    assert.is(tooLarge.status, 413);
    const abandoned = pausedUpload(env.gw.url, env.gw.key, {
      head: wav(),
      size: 20 * 1024 * 1024,
      pauseAfter: 2 * 1024 * 1024,
      query: { provider: "openai" },
    });
    await abandoned.paused;
    await eventually(() => spooled(env), "the upload is being spooled", { until: (files) => files.length > 0 });
    await abandoned.cut();
    await eventually(() => spooled(env), "the abandoned upload's spool is removed", {
      until: (files) => files.length === 0,
    });
    assert.is(env.upstream.files.uploads, 0);
  },
);

test("a cursor of another list is a 400", async ({ env }) => {
  const own = Buffer.from(JSON.stringify(["own", "2026-01-01T00:00:00.000000Z", "file_x"])).toString("base64url");
  const res = await call(env.gw.url, "GET", `/api/v1/files?provider=anthropic&cursor=${own}`, { key: env.gw.key });
  assert.is(res.status, 400, res.text);
});

test("a crafted cursor with an impossible time is a 400 naming the cursor, not a 500", async ({ env }) => {
  for (const at of [
    "2026-13-01T00:00:00.000000Z",
    "2026-02-30T00:00:00.000000Z",
    "0000-01-01T00:00:00.000000Z",
    "2026-01-01T25:00:00.000000Z",
  ]) {
    const crafted = Buffer.from(JSON.stringify(["own", at, "file_x"])).toString("base64url");
    const res = await call(env.gw.url, "GET", `/api/v1/files?cursor=${crafted}`, { key: env.gw.key });
    assert.is(res.status, 400, `${at}: ${res.text}`);
    assert.match(res.text, /cursor is not a cursor this list gave out/);
  }
  const valid = Buffer.from(JSON.stringify(["own", "2026-01-01T00:00:00.000000Z", "file_x"])).toString("base64url");
  assert.is((await call(env.gw.url, "GET", `/api/v1/files?cursor=${valid}`, { key: env.gw.key })).status, 200);
});

test.run();
