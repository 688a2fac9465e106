import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { at } from "../../support/http.js";
import { startFilesGateway, type FilesGateway } from "../../support/file-gateway.js";
import { acceptedSamples, exe, plainZip, png, TEXTS, wav } from "../../support/file-samples.js";
import { downloadFile, streamUpload, uploadFile } from "../../support/file-uploads.js";

/**
 * POST /files detects the type from the bytes alone: every accepted format is recognised from a
 * real sample, names and declared types never matter, and anything else is a 400 naming it.
 */
const test = suite<{ env: FilesGateway }>("file types");
test.before(async (ctx) => {
  ctx.env = await startFilesGateway();
});
test.after(async (ctx) => ctx.env.stop());

for (const sample of acceptedSamples()) {
  test(`${sample.name}: stored as ${sample.mimeType}, content read back byte for byte`, async ({ env }) => {
    const res = await uploadFile(env.gw.url, env.gw.key, sample.bytes, {
      filename: sample.name,
      contentType: "application/octet-stream",
    });
    assert.is(res.status, 201, res.text);
    assert.is(at(res.body, "mime_type"), sample.mimeType);
    assert.is(at(res.body, "size_bytes"), sample.bytes.length);
    assert.is(at(res.body, "filename"), sample.name);
    const content = await downloadFile(env.gw.url, env.gw.key, String(at(res.body, "id")));
    assert.is(content.status, 200);
    assert.is(content.headers.get("content-type"), sample.mimeType);
    assert.ok(content.bytes.equals(sample.bytes), "the content is the uploaded bytes");
  });
}

test("a PNG named .pdf and declared application/pdf is a PNG", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, png(), {
    filename: "report.pdf",
    contentType: "application/pdf",
  });
  assert.is(res.status, 201, res.text);
  assert.is(at(res.body, "mime_type"), "image/png");
  assert.is(at(res.body, "filename"), "report.pdf");
});

test("text declared as an image is text, classified by its structure", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, Buffer.from(TEXTS.csv), {
    filename: "photo.png",
    contentType: "image/png",
  });
  assert.is(res.status, 201, res.text);
  assert.is(at(res.body, "mime_type"), "text/csv");
});

test("an executable (MZ header) is refused with 400 naming what it is", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, exe(), {
    filename: "setup.pdf",
    contentType: "application/pdf",
  });
  assert.is(res.status, 400, res.text);
  assert.is(at(res.body, "error", "code"), 400);
  assert.match(String(at(res.body, "error", "message")), /application\/x-msdownload/);
});

test("a plain ZIP archive (not an Office document) is refused with 400", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, plainZip(), { filename: "document.docx" });
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /application\/zip/);
});

test("an empty file is refused with 400", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, new Uint8Array(0), { filename: "empty.txt" });
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /empty/);
});

test("unknown binary content (neither a known format nor text) is refused with 400", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, Buffer.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x10, 0x00]), {
    filename: "data.txt",
    contentType: "text/plain",
  });
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /UTF-8 text/);
});

test("text that breaks UTF-8 far beyond the first bytes is refused once the bad byte arrives", async ({ env }) => {
  const text = Buffer.from("plain words ".repeat(40_000));
  const res = await uploadFile(
    env.gw.url,
    env.gw.key,
    Buffer.concat([text, Buffer.from([0xc3, 0x28]), Buffer.from(" tail")]),
    { filename: "notes.txt" },
  );
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /not valid UTF-8/);
});

test("text with a NUL byte after the sniffed prefix is refused", async ({ env }) => {
  const text = Buffer.from("a,b\n".repeat(50_000));
  const res = await uploadFile(env.gw.url, env.gw.key, Buffer.concat([text, Buffer.from([0]), Buffer.from("c,d\n")]), {
    filename: "table.csv",
  });
  assert.is(res.status, 400, res.text);
  assert.match(String(at(res.body, "error", "message")), /control character 0x00/);
});

test("JSON is classified over the whole content: a broken end makes it plain text", async ({ env }) => {
  const big = JSON.stringify({ rows: Array.from({ length: 20_000 }, (_, i) => ({ i, name: `row ${i}` })) });
  const whole = await uploadFile(env.gw.url, env.gw.key, Buffer.from(big), { filename: "big.json" });
  assert.is(at(whole.body, "mime_type"), "application/json", whole.text);
  const broken = await uploadFile(env.gw.url, env.gw.key, Buffer.from(big.slice(0, -1)), { filename: "big.json" });
  assert.is(at(broken.body, "mime_type"), "text/plain", broken.text);
});

test("a UTF-8 character split across transport chunks is still valid text", async ({ env }) => {
  // 64 KiB of ASCII puts the two bytes of "é" across the boundary of the streamed slices.
  const text = Buffer.concat([Buffer.alloc(64 * 1024 - 1, "x"), Buffer.from("é and more\n")]);
  const res = await streamUpload(env.gw.url, env.gw.key, { head: text, size: text.length, filename: "split.txt" });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(at(res.body, "mime_type"), "text/plain");
});

test("a large binary of an accepted type streams through: only its first bytes decide", async ({ env }) => {
  const header = wav();
  const res = await streamUpload(env.gw.url, env.gw.key, { head: header, size: 5 * 1024 * 1024, filename: "long.wav" });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(at(res.body, "mime_type"), "audio/wav");
  assert.is(at(res.body, "size_bytes"), 5 * 1024 * 1024);
});

test.run();
