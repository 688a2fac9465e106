import path from "node:path";
import { QueryTypes } from "sequelize";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { eventually } from "../../support/eventually.js";
import { filesUnder, startFilesGateway, type FilesGateway } from "../../support/file-gateway.js";
import { exe, wav } from "../../support/file-samples.js";
import { pausedUpload, streamUpload } from "../../support/file-uploads.js";

/**
 * The 100 MB limit (104857600 bytes) and what is left after uploads that do not complete: uploads
 * are streamed (never built in memory here either), a body over the limit is answered 413 at the
 * first byte over it without reading the rest, and a refused or abandoned upload leaves neither a
 * row nor bytes.
 */
const LIMIT = 104_857_600;
const MiB = 1024 * 1024;

const test = suite<{ env: FilesGateway }>("file upload limits");
test.before(async (ctx) => {
  ctx.env = await startFilesGateway();
});
test.after(async (ctx) => ctx.env.stop());

async function rowCount(env: FilesGateway): Promise<number> {
  const [row] = await env.gw.gateway.sequelize.query<{ n: string }>("SELECT count(*) AS n FROM files", {
    type: QueryTypes.SELECT,
  });
  return Number(row!.n);
}

const blobs = (env: FilesGateway) => filesUnder(path.join(env.dataDir, "files"));

test("exactly 100 MB is accepted", async ({ env }) => {
  const res = await streamUpload(env.gw.url, env.gw.key, { head: wav(), size: LIMIT, filename: "limit.wav" });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(at(res.body, "size_bytes"), LIMIT);
});

test("100 MB + 1 byte is a 413 payload_too_large, and leaves no row and no bytes", async ({ env }) => {
  const [rowsBefore, blobsBefore] = [await rowCount(env), await blobs(env)];
  const res = await streamUpload(env.gw.url, env.gw.key, { head: wav(), size: LIMIT + 1, filename: "over.wav" });
  assert.is(res.status, 413, JSON.stringify(res.body));
  assert.equal(at(res.body, "error"), {
    code: 413,
    message: `The file exceeds the limit of ${LIMIT} bytes for this endpoint`,
    metadata: { reason: "payload_too_large", retryable: false },
  });
  assert.is(await rowCount(env), rowsBefore);
  await eventually(() => blobs(env), "the refused upload's bytes are removed", {
    until: (now) => now.length === blobsBefore.length,
  });
});

test("a longer stream is refused while it is still being sent, and the connection is closed", async ({ env }) => {
  const size = 300 * MiB;
  const res = await streamUpload(env.gw.url, env.gw.key, { head: wav(), size, filename: "huge.wav" });
  assert.is(res.status, 413);
  assert.is(res.headers.connection, "close");
  assert.ok(res.sentBeforeAnswer < size, `the server stopped reading (${res.sentBeforeAnswer} of ${size} bytes sent)`);
});

test("a declared Content-Length far over the limit is refused before the body is read", async ({ env }) => {
  const size = 200 * MiB;
  const res = await streamUpload(env.gw.url, env.gw.key, {
    head: wav(),
    size,
    declaredLength: size + 200,
    filename: "declared.wav",
  });
  assert.is(res.status, 413);
  assert.is(at(res.body, "error", "metadata", "reason"), "payload_too_large");
  assert.ok(res.sentBeforeAnswer < size);
});

test("a refused type is answered once the first bytes show it, not after the whole upload", async ({ env }) => {
  const size = 300 * MiB;
  const rowsBefore = await rowCount(env);
  const res = await streamUpload(env.gw.url, env.gw.key, { head: exe(), size, filename: "setup.exe" });
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.ok(res.sentBeforeAnswer < size, `answered after ${res.sentBeforeAnswer} of ${size} bytes`);
  assert.is(await rowCount(env), rowsBefore);
});

test("a client that disconnects mid-upload leaves nothing behind: no row, no blob file", async ({ env }) => {
  const rowsBefore = await rowCount(env);
  const blobsBefore = await blobs(env);
  const upload = pausedUpload(env.gw.url, env.gw.key, {
    head: wav(),
    size: 50 * MiB,
    pauseAfter: 4 * MiB,
    filename: "abandoned.wav",
  });
  await upload.paused;
  // The bytes are on their way into the store: its temporary file exists.
  await eventually(() => blobs(env), "the upload is being stored", {
    until: (now) => now.some((file) => file.startsWith(".incoming")),
  });
  await upload.cut();
  await eventually(() => blobs(env), "the abandoned upload's bytes are removed", {
    until: (now) => now.length === blobsBefore.length,
  });
  assert.equal(await blobs(env), blobsBefore);
  assert.is(await rowCount(env), rowsBefore);
});

test("after refused and abandoned uploads the gateway still serves uploads", async ({ env }) => {
  const res = await streamUpload(env.gw.url, env.gw.key, { head: wav(), size: 2 * MiB, filename: "after.wav" });
  assert.is(res.status, 201, JSON.stringify(res.body));
  const key = await call(env.gw.url, "GET", "/api/v1/key", { key: env.gw.key });
  assert.is(key.status, 200);
});

test.run();
