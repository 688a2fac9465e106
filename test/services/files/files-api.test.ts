import { randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import { ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { FilesService, UploadFileRequestSchema, type UploadFileRequest } from "../../../gen/gateway/v1/files_pb.js";
import { ErrorDetailSchema } from "../../../gen/gateway/v1/errors_pb.js";
import { startFilesGateway, type FilesGateway } from "../../support/file-gateway.js";
import { pdf, png, TEXTS } from "../../support/file-samples.js";
import { downloadFile, uploadFile } from "../../support/file-uploads.js";
import { bearer, createGrpcClient, grpcFailure } from "../../support/grpc-client.js";
import { at, call, rawRequest } from "../../support/http.js";

/**
 * GET, list, content and DELETE of own-storage files, the workspace selector and its scope rules,
 * bad input per endpoint, and the same upload and read over gRPC.
 */
interface Context {
  env: FilesGateway;
  /** A second workspace of the organization, and a non-management key in each. */
  otherWorkspace: string;
  otherKey: string;
  memberKey: string;
}

const test = suite<Context>("files API");
test.before(async (ctx) => {
  ctx.env = await startFilesGateway();
  const { url, key } = ctx.env.gw;
  const workspace = await call(url, "POST", "/api/v1/workspaces", { key, body: { name: "Files B", slug: "files-b" } });
  ctx.otherWorkspace = String(at(workspace.body, "data", "id"));
  const other = await call(url, "POST", "/api/v1/keys", {
    key,
    body: { name: "b key", workspace_id: ctx.otherWorkspace },
  });
  ctx.otherKey = String(at(other.body, "key"));
  const member = await call(url, "POST", "/api/v1/keys", { key, body: { name: "a key" } });
  ctx.memberKey = String(at(member.body, "key"));
});
test.after(async (ctx) => ctx.env.stop());

const FILE_ID = /^file_[0-9a-f]{24}$/;

test("POST /files answers 201 with the File, unwrapped", async ({ env }) => {
  const res = await uploadFile(env.gw.url, env.gw.key, pdf(), { filename: "Bericht für Q1.pdf" });
  assert.is(res.status, 201, res.text);
  const body = res.body as Record<string, unknown>;
  assert.equal(Object.keys(body).sort(), [
    "created_at",
    "downloadable",
    "filename",
    "id",
    "mime_type",
    "size_bytes",
    "type",
  ]);
  assert.match(String(body.id), FILE_ID);
  assert.is(body.type, "file");
  assert.is(body.filename, "Bericht für Q1.pdf");
  assert.is(body.downloadable, true);
  assert.ok(!Number.isNaN(Date.parse(String(body.created_at))));
});

test("GET /files/{id} answers the same File; the content comes back with its type and name", async ({ env }) => {
  const up = await uploadFile(env.gw.url, env.gw.key, Buffer.from(TEXTS.markdown), { filename: "notes (v2) ü.md" });
  const id = String(at(up.body, "id"));
  const got = await call(env.gw.url, "GET", `/api/v1/files/${id}`, { key: env.gw.key });
  assert.is(got.status, 200);
  assert.equal(got.body, up.body);
  const content = await downloadFile(env.gw.url, env.gw.key, id);
  assert.is(content.status, 200);
  assert.is(content.headers.get("content-type"), "text/markdown");
  assert.is(content.headers.get("x-content-type-options"), "nosniff");
  assert.is(
    content.headers.get("content-disposition"),
    `attachment; filename="notes (v2) _.md"; filename*=UTF-8''notes%20%28v2%29%20%C3%BC.md`,
  );
  assert.is(content.bytes.toString(), TEXTS.markdown);
});

test("GET /files lists the workspace's files newest first, page by page with the cursor", async ({
  env,
  otherWorkspace,
}) => {
  // A fresh workspace of its own, so the listing holds exactly these files.
  const ws = await call(env.gw.url, "POST", "/api/v1/workspaces", {
    key: env.gw.key,
    body: { name: "Listing", slug: "listing" },
  });
  const workspace_id = String(at(ws.body, "data", "id"));
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const up = await uploadFile(env.gw.url, env.gw.key, Buffer.from(`file number ${i}\n`), {
      filename: `f${i}.txt`,
      query: { workspace_id },
    });
    assert.is(up.status, 201, up.text);
    ids.unshift(String(at(up.body, "id")));
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const query = new URLSearchParams({ workspace_id, limit: "2", ...(cursor ? { cursor } : {}) });
    const page = await call(env.gw.url, "GET", `/api/v1/files?${query}`, { key: env.gw.key });
    assert.is(page.status, 200, page.text);
    const data = at(page.body, "data") as Array<{ id: string }>;
    seen.push(...data.map((f) => f.id));
    assert.is(at(page.body, "first_id"), data[0]?.id ?? null);
    assert.is(at(page.body, "last_id"), data.at(-1)?.id ?? null);
    cursor = (at(page.body, "cursor") as string | null) ?? undefined;
    assert.is(at(page.body, "has_more"), cursor !== undefined);
    pages++;
  } while (cursor);
  assert.equal(seen, ids);
  assert.is(pages, 3);
  const other = await call(env.gw.url, "GET", `/api/v1/files?workspace_id=${otherWorkspace}`, { key: env.gw.key });
  assert.ok((at(other.body, "data") as Array<{ id: string }>).every((f) => !ids.includes(f.id)));
});

test("DELETE /files/{id}: the file, its content and its bytes are gone; a second DELETE is a 404", async ({ env }) => {
  const up = await uploadFile(env.gw.url, env.gw.key, png(), { filename: "gone.png" });
  const id = String(at(up.body, "id"));
  const deleted = await call(env.gw.url, "DELETE", `/api/v1/files/${id}`, { key: env.gw.key });
  assert.is(deleted.status, 200, deleted.text);
  assert.equal(deleted.body, { id, type: "file", deleted: true });
  assert.is((await call(env.gw.url, "GET", `/api/v1/files/${id}`, { key: env.gw.key })).status, 404);
  assert.is((await downloadFile(env.gw.url, env.gw.key, id)).status, 404);
  assert.is((await call(env.gw.url, "DELETE", `/api/v1/files/${id}`, { key: env.gw.key })).status, 404);
});

test("a file of another workspace is a 404 for every operation, whoever asks", async ({
  env,
  otherWorkspace,
  otherKey,
  memberKey,
}) => {
  const up = await uploadFile(env.gw.url, otherKey, png(), { filename: "theirs.png" });
  assert.is(up.status, 201, up.text);
  assert.is(at(up.body, "mime_type"), "image/png");
  const id = String(at(up.body, "id"));
  for (const key of [memberKey, env.gw.key]) {
    assert.is((await call(env.gw.url, "GET", `/api/v1/files/${id}`, { key })).status, 404);
    assert.is((await downloadFile(env.gw.url, key, id)).status, 404);
    assert.is((await call(env.gw.url, "DELETE", `/api/v1/files/${id}`, { key })).status, 404);
  }
  // The management key reaches it by naming its workspace.
  const named = await call(env.gw.url, "GET", `/api/v1/files/${id}?workspace_id=${otherWorkspace}`, {
    key: env.gw.key,
  });
  assert.is(named.status, 200, named.text);
  assert.is((await call(env.gw.url, "GET", `/api/v1/files/${id}`, { key: otherKey })).status, 200);
});

test("a key that is not a management key cannot name another workspace: 404, as if it did not exist", async ({
  env,
  otherWorkspace,
  memberKey,
}) => {
  const upload = await uploadFile(env.gw.url, memberKey, png(), { query: { workspace_id: otherWorkspace } });
  assert.is(upload.status, 404, upload.text);
  assert.match(String(at(upload.body, "error", "message")), /Workspace/);
  const list = await call(env.gw.url, "GET", `/api/v1/files?workspace_id=${otherWorkspace}`, { key: memberKey });
  assert.is(list.status, 404);
  const unknown = await call(env.gw.url, "GET", `/api/v1/files?workspace_id=${randomUUID()}`, { key: env.gw.key });
  assert.is(unknown.status, 404);
});

test("file ids: more than 256 characters or other characters are a 400 on every path", async ({ env }) => {
  for (const id of ["a".repeat(257), "file.1", "file%20x", "%C3%A9"]) {
    for (const [method, suffix] of [
      ["GET", ""],
      ["DELETE", ""],
      ["GET", "/content"],
    ] as const) {
      const res = await call(env.gw.url, method, `/api/v1/files/${id}${suffix}`, { key: env.gw.key });
      assert.is(res.status, 400, `${method} ${id}${suffix}: ${res.text}`);
      assert.match(String(at(res.body, "error", "message")), /file_id/);
    }
  }
  const longest = await call(env.gw.url, "GET", `/api/v1/files/${"a".repeat(256)}`, { key: env.gw.key });
  assert.is(longest.status, 404, "256 characters is a valid id that names nothing");
});

test("bad query parameters are a 400 naming them", async ({ env }) => {
  const cases: Array<[string, RegExp]> = [
    ["/api/v1/files?workspace_id=not-a-uuid", /workspace_id/],
    ["/api/v1/files?limit=0", /limit/],
    ["/api/v1/files?limit=101", /limit/],
    ["/api/v1/files?cursor=%21%21", /cursor/],
    [`/api/v1/files?cursor=${Buffer.from(JSON.stringify(["openai", "x"])).toString("base64url")}`, /cursor/],
    ["/api/v1/files?provider=dropbox", /provider/],
  ];
  for (const [path, message] of cases) {
    const res = await call(env.gw.url, "GET", path, { key: env.gw.key });
    assert.is(res.status, 400, `${path}: ${res.text}`);
    assert.match(String(at(res.body, "error", "message")), message);
  }
  const upload = await uploadFile(env.gw.url, env.gw.key, png(), { query: { workspace_id: "nope" } });
  assert.is(upload.status, 400, upload.text);
});

test("POST /files needs a multipart body with a file part named 'file'", async ({ env }) => {
  const json = await call(env.gw.url, "POST", "/api/v1/files", { key: env.gw.key, body: { file: "x" } });
  assert.is(json.status, 400, json.text);
  assert.match(String(at(json.body, "error", "message")), /multipart\/form-data/);

  const noBoundary = await rawRequest(env.gw.url, "POST", "/api/v1/files", {
    key: env.gw.key,
    headers: { "content-type": "multipart/form-data" },
    body: "x",
  });
  assert.is(noBoundary.status, 400);

  const form = new FormData();
  form.append("document", new Blob(["hello"]), "hello.txt");
  const wrongField = await fetch(`${env.gw.url}/api/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}` },
    body: form,
  });
  assert.is(wrongField.status, 400);
  assert.match(await wrongField.text(), /no file in the field 'file'/);

  const textField = new FormData();
  textField.append("file", "just a string");
  const notAFile = await fetch(`${env.gw.url}/api/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${env.gw.key}` },
    body: textField,
  });
  assert.is(notAFile.status, 400);
  assert.match(await notAFile.text(), /must be a file part/);

  const truncated = await rawRequest(env.gw.url, "POST", "/api/v1/files", {
    key: env.gw.key,
    headers: { "content-type": "multipart/form-data; boundary=XYZ" },
    body: '--XYZ\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello, no closing boundary',
  });
  assert.is(truncated.status, 400, JSON.stringify(truncated.body));
});

test("a file name with a line break is refused (it would forge headers downstream)", async ({ env }) => {
  const res = await rawRequest(env.gw.url, "POST", "/api/v1/files", {
    key: env.gw.key,
    headers: { "content-type": "multipart/form-data; boundary=XYZ" },
    body:
      `--XYZ\r\ncontent-disposition: form-data; name="file"; filename*=UTF-8''a%0D%0Ab.txt\r\n` +
      `\r\nhello\r\n--XYZ--\r\n`,
  });
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.match(String(at(res.body, "error", "message")), /filename/);
});

test("no key: 401 on every files endpoint", async ({ env }) => {
  assert.is((await uploadFile(env.gw.url, "", png())).status, 401);
  assert.is((await call(env.gw.url, "GET", "/api/v1/files")).status, 401);
  assert.is((await call(env.gw.url, "GET", "/api/v1/files/file_x")).status, 401);
  assert.is((await call(env.gw.url, "DELETE", "/api/v1/files/file_x")).status, 401);
  assert.is((await call(env.gw.url, "GET", "/api/v1/files/file_x/content")).status, 401);
});

test("gRPC: a client-streaming UploadFile, then GetFile with grpc-js, see what REST sees", async ({ env }) => {
  const files = createClient(FilesService, createGrpcTransport({ baseUrl: env.gw.grpcUrl }));
  const bytes = Buffer.from(TEXTS.ndjson);
  async function* messages(): AsyncIterable<UploadFileRequest> {
    yield create(UploadFileRequestSchema, {
      part: { case: "metadata", value: { filename: "events.ndjson", contentType: "image/gif" } },
    });
    for (let i = 0; i < bytes.length; i += 7)
      yield create(UploadFileRequestSchema, { part: { case: "chunk", value: bytes.subarray(i, i + 7) } });
  }
  const file = await files.uploadFile(messages(), { headers: bearer(env.gw.key) });
  assert.is(file.mimeType, "application/x-ndjson");
  assert.is(Number(file.sizeBytes), bytes.length);

  const grpc = createGrpcClient(FilesService, env.gw.grpcUrl);
  try {
    const got = await grpc.unary(FilesService.method.getFile, { fileId: file.id }, bearer(env.gw.key));
    assert.is(got.mimeType, "application/x-ndjson");
    const rest = await call(env.gw.url, "GET", `/api/v1/files/${file.id}`, { key: env.gw.key });
    assert.is(at(rest.body, "filename"), got.filename);
    const missing = await grpcFailure(
      grpc.unary(FilesService.method.getFile, { fileId: "file_missing" }, bearer(env.gw.key)),
    );
    assert.is(missing.code, status.NOT_FOUND);
    const bad = await grpcFailure(grpc.unary(FilesService.method.getFile, { fileId: "bad id" }, bearer(env.gw.key)));
    assert.is(bad.code, status.INVALID_ARGUMENT);
  } finally {
    grpc.close();
  }

  const chunks: Buffer[] = [];
  for await (const part of files.getFileContent({ fileId: file.id }, { headers: bearer(env.gw.key) }))
    chunks.push(Buffer.from(part.data));
  assert.ok(Buffer.concat(chunks).equals(bytes));
});

test("gRPC: an upload that starts with a chunk, or sends metadata twice, is a 400", async ({ env }) => {
  const files = createClient(FilesService, createGrpcTransport({ baseUrl: env.gw.grpcUrl }));
  const chunk = create(UploadFileRequestSchema, { part: { case: "chunk", value: Buffer.from("x") } });
  const metadata = create(UploadFileRequestSchema, { part: { case: "metadata", value: { filename: "a.txt" } } });
  for (const sequence of [
    [chunk, metadata],
    [metadata, chunk, metadata],
  ]) {
    async function* messages() {
      yield* sequence;
    }
    try {
      await files.uploadFile(messages(), { headers: bearer(env.gw.key) });
      assert.unreachable("the upload must fail");
    } catch (err) {
      const error = ConnectError.from(err);
      assert.is(error.findDetails(ErrorDetailSchema)[0]?.httpStatus, 400, error.message);
    }
  }
});

test.run();
