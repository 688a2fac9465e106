import { createHash } from "node:crypto";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../../support/http.js";
import { eventually } from "../../support/eventually.js";
import { startFilesGateway, type FilesGateway } from "../../support/file-gateway.js";
import { png, wav } from "../../support/file-samples.js";
import { downloadFile, pausedUpload, streamUpload, uploadFile } from "../../support/file-uploads.js";
import { startMockS3, type MockS3 } from "../../upstream/mock-s3.js";

/**
 * With GATEWAY_S3_* set the bytes go to an S3-compatible bucket (our mock S3 server): small files as
 * one PutObject, larger ones as a multipart upload of 5 MiB parts. An upload that fails, is refused
 * midway or is abandoned leaves no object and no open multipart upload behind.
 */
const MiB = 1024 * 1024;
const PREFIX = "gw/";

const test = suite<{ env: FilesGateway; s3: MockS3 }>("files in an S3 bucket");
test.before(async (ctx) => {
  // The SDK's notice that its 2027 releases need Node 22 is not what this suite is about.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = "true";
  ctx.s3 = await startMockS3();
  ctx.env = await startFilesGateway({
    GATEWAY_S3_BUCKET: ctx.s3.bucket,
    GATEWAY_S3_ENDPOINT: ctx.s3.url,
    GATEWAY_S3_REGION: "eu-central-1",
    GATEWAY_S3_ACCESS_KEY_ID: "AKIDTESTFILES",
    GATEWAY_S3_SECRET_ACCESS_KEY: "test-secret-files",
    GATEWAY_S3_PREFIX: PREFIX,
  });
});
test.after(async (ctx) => {
  await ctx.env.stop();
  await ctx.s3.close();
});
test.before.each(({ s3 }) => {
  s3.failParts = false;
});

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

test("a small file is one object under <prefix>files/<workspace>/<id>; content and delete use it", async ({
  env,
  s3,
}) => {
  const res = await uploadFile(env.gw.url, env.gw.key, png(), { filename: "small.png" });
  assert.is(res.status, 201, res.text);
  const id = String(at(res.body, "id"));
  const keys = [...s3.objects.keys()].filter((key) => key.endsWith(`/${id}`));
  assert.is(keys.length, 1);
  assert.match(keys[0]!, new RegExp(`^${PREFIX}files/[0-9a-f-]{36}/${id}$`));
  assert.ok(s3.objects.get(keys[0]!)!.equals(png()));
  const content = await downloadFile(env.gw.url, env.gw.key, id);
  assert.ok(content.bytes.equals(png()));
  assert.is((await call(env.gw.url, "DELETE", `/api/v1/files/${id}`, { key: env.gw.key })).status, 200);
  assert.is(s3.objects.has(keys[0]!), false);
});

test("a 12 MiB file goes up as a multipart upload and reads back identical", async ({ env, s3 }) => {
  const partsBefore = s3.partsReceived;
  const size = 12 * MiB;
  const res = await streamUpload(env.gw.url, env.gw.key, { head: wav(), fill: 7, size, filename: "big.wav" });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(s3.partsReceived - partsBefore, 3);
  assert.is(s3.openUploads(), 0);
  const content = await downloadFile(env.gw.url, env.gw.key, String(at(res.body, "id")));
  assert.is(content.bytes.length, size);
  const expected = Buffer.alloc(size, 7);
  wav().copy(expected);
  assert.is(sha(content.bytes), sha(expected));
});

test("a bucket that fails: 503, no object and no open upload", async ({ env, s3 }) => {
  s3.failParts = true;
  const objects = s3.objects.size;
  const res = await streamUpload(env.gw.url, env.gw.key, { head: wav(), size: 11 * MiB, filename: "failing.wav" });
  assert.is(res.status, 503, JSON.stringify(res.body));
  assert.is(at(res.body, "error", "code"), 503);
  assert.not.match(JSON.stringify(res.body), /test-secret|AKID/);
  await eventually(() => s3.openUploads(), "the multipart upload is aborted", { until: (open) => open === 0 });
  assert.is(s3.objects.size, objects);
});

test("text that turns out not to be UTF-8 after a part was stored: 400, and the upload is aborted", async ({
  env,
  s3,
}) => {
  const partsBefore = s3.partsReceived;
  const objects = s3.objects.size;
  const text = Buffer.concat([Buffer.alloc(7 * MiB, "a"), Buffer.from([0xff, 0xfe])]);
  const res = await streamUpload(env.gw.url, env.gw.key, { head: text, size: text.length, filename: "broken.txt" });
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.ok(s3.partsReceived > partsBefore, "a part had been stored before the bad bytes came");
  await eventually(() => s3.openUploads(), "the multipart upload is aborted", { until: (open) => open === 0 });
  assert.is(s3.objects.size, objects);
});

test("a client that disconnects mid-upload leaves no object and no open upload", async ({ env, s3 }) => {
  const partsBefore = s3.partsReceived;
  const objects = s3.objects.size;
  const upload = pausedUpload(env.gw.url, env.gw.key, {
    head: wav(),
    size: 40 * MiB,
    pauseAfter: 8 * MiB,
    filename: "abandoned.wav",
  });
  await upload.paused;
  await eventually(() => s3.partsReceived, "a part of the upload is stored", { until: (parts) => parts > partsBefore });
  await upload.cut();
  await eventually(() => s3.openUploads(), "the multipart upload is aborted", { until: (open) => open === 0 });
  assert.is(s3.objects.size, objects);
  const rows = await call(env.gw.url, "GET", "/api/v1/files?limit=100", { key: env.gw.key });
  assert.not.ok((at(rows.body, "data") as Array<{ filename: string }>).some((f) => f.filename === "abandoned.wav"));
});

test.run();
