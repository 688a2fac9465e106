import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { startRemoteFacade, type RemoteFacade } from "../../support/remote-facade.js";
import { newKeySecret } from "../../../server/platform/secrets/key-secret.js";
import { eventually } from "../../support/eventually.js";
import { filesUnder } from "../../support/file-gateway.js";
import { exe, jpeg, wav } from "../../support/file-samples.js";
import { downloadFile, pausedUpload, streamUpload, uploadFile } from "../../support/file-uploads.js";
import { createDatabase } from "../../support/gateway.js";
import { startGatewayProcess, type GatewayProcess } from "../../support/gateway-process.js";
import { at } from "../../support/http.js";

/**
 * Uploads and downloads with the facade in this process and the core in a child process, joined by
 * gRPC only: the multipart body becomes a client stream over HTTP/2 (flow control carries the
 * backpressure), the content a server stream, and the same limits and clean-up hold.
 */
interface Context {
  core: GatewayProcess;
  dataDir: string;
  key: string;
  facade: RemoteFacade;
  url: string;
}

const test = suite<Context>("files through a remote core");
test.before(async (ctx) => {
  ctx.key = newKeySecret();
  ctx.dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-files-split-"));
  ctx.core = await startGatewayProcess({
    databaseUrl: await createDatabase(),
    key: ctx.key,
    args: ["--core-only"],
    env: { GATEWAY_DATA_DIR: ctx.dataDir },
  });
  ctx.facade = await startRemoteFacade(ctx.core.grpcPort);
  ctx.url = ctx.facade.url;
});
test.after(async (ctx) => {
  await ctx.facade?.close();
  if (ctx.core) await ctx.core.stop();
  if (ctx.dataDir) await fs.rm(ctx.dataDir, { recursive: true, force: true });
});

const blobs = (ctx: Context) => filesUnder(path.join(ctx.dataDir, "files"));

test("an upload streams to the remote core and its content streams back", async ({ url, key }) => {
  const up = await uploadFile(url, key, jpeg(), { filename: "photo.gif", contentType: "image/gif" });
  assert.is(up.status, 201, up.text);
  assert.is(at(up.body, "mime_type"), "image/jpeg");
  const big = await streamUpload(url, key, { head: wav(), fill: 3, size: 8 * 1024 * 1024 });
  assert.is(big.status, 201, JSON.stringify(big.body));
  const content = await downloadFile(url, key, String(at(big.body, "id")));
  assert.is(content.status, 200);
  assert.is(content.headers.get("content-type"), "audio/wav");
  assert.is(content.bytes.length, 8 * 1024 * 1024);
  assert.ok(content.bytes.subarray(0, wav().length).equals(wav()));
  assert.is(content.bytes.at(-1), 3);
});

test("over the limit: 413 from the facade, and the core keeps nothing", async (ctx) => {
  const before = await blobs(ctx);
  const res = await streamUpload(ctx.url, ctx.key, { head: wav(), size: 104_857_601 });
  assert.is(res.status, 413);
  await eventually(() => blobs(ctx), "the core removed the partial upload", {
    until: (now) => now.length === before.length,
  });
});

test("a refused type is a 400 from the core", async ({ url, key }) => {
  const res = await uploadFile(url, key, exe());
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /msdownload/);
});

test("a client that disconnects mid-upload leaves nothing behind on the core", async (ctx) => {
  const before = await blobs(ctx);
  const upload = pausedUpload(ctx.url, ctx.key, { head: wav(), size: 30 * 1024 * 1024, pauseAfter: 3 * 1024 * 1024 });
  await upload.paused;
  await eventually(() => blobs(ctx), "the core is storing the upload", {
    until: (now) => now.some((file) => file.startsWith(".incoming")),
  });
  await upload.cut();
  await eventually(() => blobs(ctx), "the core removed the abandoned upload", {
    until: (now) => now.length === before.length,
  });
});

test.run();
