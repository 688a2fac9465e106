import net from "node:net";
import pg from "pg";
import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { newKeySecret } from "../../server/platform/secrets/key-secret.js";
import { eventually } from "../support/eventually.js";
import { createDatabase } from "../support/gateway.js";
import { freePort, startGatewayProcess } from "../support/gateway-process.js";
import { at, call } from "../support/http.js";

/**
 * What `npm start` tells its operator (cmd/gateway.ts, server/app/app.ts): a port held by
 * another process stops the start naming its setting before any migration ran; an empty catalog
 * is warned about; the listening line has the real addresses; a generated bootstrap key is shown
 * after it.
 */
const test = suite("start-up");

/** A TCP server holding a port, as another program would. */
async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

async function migrationTableOf(databaseUrl: string): Promise<string | null> {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ table: string | null }>(
      "SELECT to_regclass('schema_migrations')::text AS table",
    );
    return rows[0]!.table;
  } finally {
    await client.end();
  }
}

async function failedStart(env: Record<string, string>): Promise<{ message: string; databaseUrl: string }> {
  const databaseUrl = await createDatabase();
  try {
    const gateway = await startGatewayProcess({ databaseUrl, key: newKeySecret(), env });
    await gateway.stop();
  } catch (err) {
    return { message: (err as Error).message, databaseUrl };
  }
  throw new Error("the gateway started although a port was held");
}

test("PORT held by another process: the start fails naming PORT, exits non-zero, and no migration ran", async () => {
  const held = await holdPort();
  try {
    const { message, databaseUrl } = await failedStart({ PORT: String(held.port) });
    assert.match(message, /exited \(code 1,/);
    assert.ok(message.includes(`port ${held.port} is in use (PORT)`), message);
    assert.not.match(message, /applied migrations/);
    assert.is(await migrationTableOf(databaseUrl), null);
  } finally {
    await held.release();
  }
});

test("GRPC_PORT held: the same, naming GRPC_PORT", async () => {
  const held = await holdPort();
  try {
    const { message, databaseUrl } = await failedStart({ GRPC_PORT: String(held.port) });
    assert.ok(message.includes(`port ${held.port} is in use (GRPC_PORT)`), message);
    assert.is(await migrationTableOf(databaseUrl), null);
  } finally {
    await held.release();
  }
});

test("PORT and GRPC_PORT the same: refused before anything starts, naming both", async () => {
  const port = await freePort();
  const { message, databaseUrl } = await failedStart({ PORT: String(port), GRPC_PORT: String(port) });
  assert.ok(message.includes(`PORT and GRPC_PORT are both ${port}`), message);
  assert.is(await migrationTableOf(databaseUrl), null);
});

test(
  "first start without GATEWAY_CONFIG: a warning naming it; the listening line's addresses; " +
    "the generated key shown after it and working; chat says no model is configured",
  async () => {
    const databaseUrl = await createDatabase();
    const gateway = await startGatewayProcess({
      databaseUrl,
      key: "",
      env: { GATEWAY_BOOTSTRAP_KEY: "", GATEWAY_CONFIG: "" },
    });
    try {
      const warning = gateway.lines.find((line) => line.includes("GATEWAY_CONFIG is not set"));
      assert.ok(warning, gateway.lines.join("\n"));
      assert.match(warning!, /examples\/gateway\.yaml/);
      const listeningAt = gateway.lines.findIndex((line) => line.includes("gateway listening"));
      const listening = JSON.parse(gateway.lines[listeningAt]!) as Record<string, unknown>;
      assert.is(listening.http, gateway.url);
      assert.is(listening.grpc, `http://127.0.0.1:${gateway.grpcPort}`);
      assert.is(listening.api, `${gateway.url}/api/v1`);
      const endpoints = listening.endpoints as string[];
      assert.ok(
        endpoints.includes(`${gateway.url}/healthz`) && endpoints.includes(`${gateway.url}/readyz`),
        String(endpoints),
      );

      // The key is written right after the listening line; its lines may still be on their way.
      const keyAt = await eventually(
        () => gateway.lines.findIndex((line) => line.includes("Management API key (shown once")),
        "the key's heading is printed",
        { until: (at) => at !== -1 },
      );
      assert.ok(keyAt > listeningAt, `the key comes after the listening line:\n${gateway.lines.join("\n")}`);
      const key = await eventually(
        () =>
          gateway.lines
            .slice(keyAt + 1)
            .map((line) => line.trim())
            .find((line) => line.length > 0),
        "the key is printed",
      );
      assert.is((await call(gateway.url, "GET", "/api/v1/key", { key })).status, 200);
      assert.is(
        gateway.lines.filter((line) => line.includes(key!)).length,
        1,
        "the key appears once, never in a log line",
      );

      const chat = await call(gateway.url, "POST", "/api/v1/chat/completions", {
        key,
        body: { model: "openai/gpt-4o-mini", messages: [{ role: "user", content: "hi" }] },
      });
      assert.is(chat.status, 400);
      const message = String(at(chat.body, "error", "message"));
      assert.match(message, /no models are configured/);
      assert.match(message, /GATEWAY_CONFIG/);
    } finally {
      await gateway.stop();
    }
  },
);

test.run();
