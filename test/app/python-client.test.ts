import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { at, call } from "../support/http.js";
import { startInferenceGateway, type InferenceGateway } from "../support/inference-gateway.js";
import { missingTools } from "../support/required-tools.js";

/**
 * The Python client recipe (docs/grpc.md): the client generated from proto/ by
 * examples/python/buf.gen.yaml with Debian's protoc and grpc_python_plugin, and
 * examples/python/client.py run against a gateway with the mock upstream. Without the tools the
 * suite is skipped with a message; under CI (which installs them, .ci/run) it fails instead.
 */
const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, "../..");
const BUF = path.join(ROOT, "node_modules/.bin/buf");
const CLIENT = path.join(ROOT, "examples/python/client.py");
const DEBIAN_PACKAGES = "protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf";

/** A Python with grpcio and protobuf (the one on PATH, else Debian's), or what is missing. */
async function toolchain(): Promise<{ python: string } | { missing: string[] }> {
  const missing = (
    await Promise.all(["protoc", "grpc_python_plugin"].map(async (tool) => ((await onPath(tool)) ? [] : [tool])))
  ).flat();
  const pythons = [process.env.PYTHON, "python3", "/usr/bin/python3"].filter((p): p is string => Boolean(p));
  let python: string | undefined;
  for (const candidate of pythons) {
    if (
      await run(candidate, ["-c", "import grpc, google.protobuf"]).then(
        () => true,
        () => false,
      )
    ) {
      python = candidate;
      break;
    }
  }
  if (!python) missing.push("python3 with grpcio and protobuf");
  return python && missing.length === 0 ? { python } : { missing };
}

async function onPath(tool: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    if (
      await fs.access(path.join(dir, tool), fs.constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return true;
  }
  return false;
}

interface Context {
  python: string;
  env: InferenceGateway;
  /** Where `buf generate` wrote (its `-o`), and the generated client's package root in it. */
  out: string;
  gen: string;
}

const test = suite<Context>("Python client (examples/python)");
const found = await toolchain();

if ("missing" in found) {
  missingTools(test, {
    suite: "Python client test",
    missing: found.missing,
    install: `apt-get install ${DEBIAN_PACKAGES}`,
  });
} else {
  test.before(async (ctx) => {
    ctx.python = found.python;
    ctx.env = await startInferenceGateway();
    ctx.out = await fs.mkdtemp(path.join(os.tmpdir(), "python-client-"));
    await run(BUF, ["generate", "--template", "examples/python/buf.gen.yaml", "-o", ctx.out], { cwd: ROOT });
    ctx.gen = path.join(ctx.out, "examples/python/gen");
  });
  test.after(async (ctx) => {
    await ctx.env?.stop();
    if (ctx.out) await fs.rm(ctx.out, { recursive: true, force: true });
  });

  const client = (ctx: Context, key: string) =>
    run(ctx.python, [CLIENT, "--target", new URL(ctx.env.gw.grpcUrl).host, "--model", "mock/chat", "Hi there"], {
      env: { ...process.env, GATEWAY_KEY: key, PYTHONPATH: ctx.gen },
    });

  test("the generated Python client calls GetCurrentKey and streams a chat", async (ctx) => {
    const { stdout } = await client(ctx, ctx.env.gw.key);
    const rest = await call(ctx.env.gw.url, "GET", "/api/v1/key", { key: ctx.env.gw.key });
    const [keyLine, reply, tokens] = stdout.split("\n");
    assert.ok(keyLine?.startsWith(`key: ${String(at(rest.body, "data", "label"))} `), stdout);
    // The mock upstream answers `Hello from <upstream model>`, one word per chunk.
    assert.is(reply, "Hello from chat-a");
    assert.match(tokens ?? "", /^tokens: [1-9]\d* in, 3 out; cost \$\d+\.\d{6}$/);
  });

  test("a refused key: the client reports UNAUTHENTICATED and exits 1", async (ctx) => {
    const failure = await client(ctx, "sk-gw-v1-0000000000000000000000000000000000000000000000000000000000000000").then(
      () => undefined,
      (err: { code?: number; stderr?: string }) => err,
    );
    assert.is(failure?.code, 1);
    assert.match(failure?.stderr ?? "", /UNAUTHENTICATED: Invalid API key/);
  });
}

test.run();
