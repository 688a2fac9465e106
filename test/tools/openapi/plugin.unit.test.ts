import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { create, fromBinary } from "@bufbuild/protobuf";
import { CodeGeneratorRequestSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { OPENAPI_FILE as GENERATED_NAME, openApiPlugin } from "../../../tools/openapi/plugin.js";
import { ROOT } from "../../architecture/import-graph.js";
import { openApiText } from "../../support/openapi.js";

/**
 * The plugin as buf runs it: a code generator request built from the protos by `buf build` (with
 * their comments), answered in-process. Its document is the committed one (CI's diff of gen/
 * checks the same after `buf generate`; this fails first, and locally), and the same every time.
 */
const test = suite("openapi: protoc plugin");

function request() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "openapi-plugin-"));
  try {
    const image = path.join(dir, "protos.binpb");
    execFileSync(
      path.join(ROOT, "node_modules/.bin/buf"),
      ["build", "proto", "--as-file-descriptor-set", "-o", image],
      { cwd: ROOT },
    );
    const set = fromBinary(FileDescriptorSetSchema, fs.readFileSync(image));
    return create(CodeGeneratorRequestSchema, {
      fileToGenerate: set.file.map((file) => file.name).filter((name) => !name.startsWith("google/")),
      protoFile: set.file,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test("writes gen/openapi/openapi.json as committed, and the same on every run", () => {
  const req = request();
  const first = openApiPlugin.run(req);
  const second = openApiPlugin.run(req);
  assert.equal(
    first.file.map((file) => file.name),
    [GENERATED_NAME],
  );
  assert.ok(first.file[0]?.content === openApiText(), "gen/openapi/openapi.json is stale: run npm run generate");
  assert.ok(first.file[0]?.content === second.file[0]?.content);
  assert.is(first.error ?? "", "");
});

test("documents from the protos' comments", () => {
  const document = JSON.parse(openApiPlugin.run(request()).file[0]!.content) as {
    paths: Record<string, Record<string, { summary?: string }>>;
  };
  assert.is(document.paths["/api/v1/key"]?.get?.summary, "GET /key: information on the key of the current request.");
});

test.run();
