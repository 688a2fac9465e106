import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { Agent, request } from "undici";
import { Entitlement } from "../gen/gateway/v1/options_pb.js";
import { OperatorService } from "../gen/gateway/v1/operator_pb.js";
import { newKeySecret } from "../server/platform/secrets/key-secret.js";
import { startEmbeddedPostgres } from "../server/platform/db/embedded-postgres.js";
import { createLogger } from "../server/platform/logger.js";
import { writeCatalogFile } from "../test/support/catalog-file.js";
import { startGatewayProcess, type GatewayProcess } from "../test/support/gateway-process.js";
import { startMockUpstream, type MockUpstream } from "../test/upstream/mock-upstream.js";

/**
 * `npm run bench -- streams`: how many concurrent intern chat streams (SSE) one gateway process
 * holds. One intern; N clients open a chat each; every run's model call (through the gateway, to
 * the mock upstream) answers only after HOLD ms, so all N streams are open and silent at once and
 * live on `: keepalive` comments. Per stream the gateway then holds the client's SSE response, its
 * attachment to the run on the host, the host's model call and that call's upstream request.
 * Reported: time until every stream is open, peak RSS of the gateway and of the intern's host
 * process, keepalives received, and whether every stream ended complete.
 */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 1_000);
const HOLD_MS = Number(process.env.BENCH_STREAM_HOLD_MS ?? 60_000);
const KEEPALIVE_MS = Number(process.env.BENCH_KEEPALIVE_MS ?? 5_000);

interface StreamOutcome {
  openedMs: number;
  keepalives: number;
  complete: boolean;
}

export async function runStreamsBenchmark(): Promise<void> {
  const log = createLogger("warn");
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-bench-streams-"));
  const postgres = await startEmbeddedPostgres(dataDir, 0, log);
  let mock: MockUpstream | undefined;
  let gateway: GatewayProcess | undefined;
  const clients = new Agent({ connections: null, keepAliveTimeout: 60_000, bodyTimeout: 0, headersTimeout: 0 });
  try {
    mock = await startMockUpstream({ recordRequests: false });
    mock.scripts.define("hold", [{ reply: "done", delayMs: HOLD_MS }]);
    const configFile = await writeCatalogFile({
      providers: [
        { slug: "mock", kind: "openai", base_url: mock.openaiBaseUrl, api_key: mock.apiKey, timeout_ms: HOLD_MS * 3 },
      ],
      models: [
        {
          id: "bench/chat",
          name: "Bench chat",
          created: 1_700_000_000,
          context_length: 8000,
          endpoints: [
            { provider: "mock", upstream_model_id: "bench", pricing: { prompt: "0.000001", completion: "0.000002" } },
          ],
        },
      ],
    });
    const operatorToken = randomBytes(32).toString("hex");
    gateway = await startGatewayProcess({
      databaseUrl: postgres.url,
      key: newKeySecret(),
      env: {
        GATEWAY_CONFIG: configFile,
        GATEWAY_OPERATOR_TOKEN: operatorToken,
        GATEWAY_SSE_KEEPALIVE_MS: String(KEEPALIVE_MS),
        GATEWAY_INTERN_MAX_OPEN_RUNS: String(STREAMS + 10),
        GATEWAY_INTERN_TURNS_PER_MINUTE: "0",
        GATEWAY_INTERN_HOST_TIMEOUT_MS: "120000",
        GATEWAY_RATE_LIMIT_REQUESTS: "0",
      },
    });
    const operator = createClient(
      OperatorService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${gateway.grpcPort}` }),
    );
    const org = await operator.createOrganization(
      { name: "bench", entitlements: [Entitlement.INTERNS] },
      { headers: { authorization: `Bearer ${operatorToken}` } },
    );
    const key = org.key;
    const workspaceId = await defaultWorkspace(postgres.url, org.data!.id);
    const internId = await provisionedIntern(gateway.url, key, workspaceId);
    const hostPid = await hostPidOf(postgres.url, internId);
    const idle = { gateway: rssMiB(gateway.child.pid!), host: rssMiB(hostPid) };

    const started = performance.now();
    let open = 0;
    let closed = 0;
    let allOpen!: () => void;
    const everyStreamOpen = new Promise<void>((resolve) => (allOpen = resolve));
    const outcomes = Promise.all(
      Array.from({ length: STREAMS }, (_, i) =>
        stream(
          gateway!.url,
          key,
          internId,
          i,
          clients,
          () => {
            open += 1;
            if (open === STREAMS) allOpen();
          },
          started,
        ).finally(() => (closed += 1)),
      ),
    );
    await everyStreamOpen;
    const openMs = performance.now() - started;
    // Shortly after: every stream is open and waiting on its model call (the first closes HOLD_MS after it opened).
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const held = { gateway: rssMiB(gateway.child.pid!), host: rssMiB(hostPid) };
    const openAtSample = open - closed;
    const results = await outcomes;
    const totalMs = performance.now() - started;
    const peak = { gateway: peakRssMiB(gateway.child.pid!), host: peakRssMiB(hostPid) };

    const keepalives = results.reduce((sum, r) => sum + r.keepalives, 0);
    const complete = results.filter((r) => r.complete).length;
    const withKeepalive = results.filter((r) => r.keepalives > 0).length;
    const cpu = os.cpus();
    console.log(
      `Machine: ${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
        `Node ${process.version}, ${os.platform()} ${os.release()}`,
    );
    console.log(`Date: ${new Date().toISOString()}`);
    console.log(
      `Command: npm run bench -- streams (BENCH_STREAMS=${STREAMS}, BENCH_STREAM_HOLD_MS=${HOLD_MS}, ` +
        `BENCH_KEEPALIVE_MS=${KEEPALIVE_MS})\n`,
    );
    console.log("| measure | result |");
    console.log("|---|---|");
    console.log(`| concurrent intern chat streams | ${STREAMS} (one intern, one run each) |`);
    console.log(`| time until all were open (first chunk received) | ${(openMs / 1000).toFixed(2)} s |`);
    console.log(`| streams that ended complete (stop, final chunk, [DONE]) | ${complete} / ${STREAMS} |`);
    console.log(`| keepalives received | ${keepalives} (${withKeepalive} streams had at least one) |`);
    console.log(`| streams open at the same time when RSS was sampled | ${openAtSample} |`);
    console.log(
      `| gateway RSS idle → holding the streams → peak | ${idle.gateway} → ${held.gateway} → ${peak.gateway} MiB |`,
    );
    console.log(`| intern host RSS idle → holding the runs → peak | ${idle.host} → ${held.host} → ${peak.host} MiB |`);
    console.log(
      `| gateway RSS per held stream | ${(((held.gateway - idle.gateway) * 1024) / openAtSample).toFixed(1)} KiB |`,
    );
    console.log(`| wall time of the whole round | ${(totalMs / 1000).toFixed(1)} s |`);
  } finally {
    await gateway?.stop();
    await mock?.close();
    await clients.close();
    await postgres.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

async function stream(
  base: string,
  key: string,
  internId: string,
  i: number,
  dispatcher: Agent,
  onOpen: () => void,
  started: number,
): Promise<StreamOutcome> {
  const res = await request(`${base}/api/v1/interns/${internId}/chat/completions`, {
    method: "POST",
    dispatcher,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ stream: true, messages: [{ role: "user", content: `[script:hold] stream ${i}` }] }),
  });
  if (res.statusCode !== 200) throw new Error(`stream ${i}: ${res.statusCode} ${await res.body.text()}`);
  let text = "";
  let openedMs = 0;
  for await (const chunk of res.body) {
    if (openedMs === 0) {
      openedMs = performance.now() - started;
      onOpen();
    }
    text += (chunk as Buffer).toString("utf8");
  }
  return {
    openedMs,
    keepalives: text.split(": keepalive\n\n").length - 1,
    complete: text.includes('"finish_reason":"stop"') && text.endsWith("data: [DONE]\n\n"),
  };
}

async function provisionedIntern(base: string, key: string, workspaceId: string): Promise<string> {
  const created = await request(`${base}/api/v1/interns`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", model: "bench/chat", provision: true, workspace_id: workspaceId }),
  });
  // Intern records are wrapped in `data`.
  const body = (await created.body.json()) as { data?: { id?: string } };
  const id = body.data?.id;
  if (created.statusCode !== 201 || !id)
    throw new Error(`POST /interns answered ${created.statusCode}: ${JSON.stringify(body)}`);
  for (;;) {
    const got = await request(`${base}/api/v1/interns/${id}`, { headers: { authorization: `Bearer ${key}` } });
    const intern = ((await got.body.json()) as { data: { status: string; last_failure_message: string | null } }).data;
    if (intern.status === "running") return id;
    if (intern.status === "failed") throw new Error(`the intern failed to start: ${intern.last_failure_message}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function withDatabase<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function defaultWorkspace(url: string, organizationId: string): Promise<string> {
  return withDatabase(
    url,
    async (client) =>
      (
        await client.query<{ id: string }>(
          "SELECT id FROM workspaces WHERE organization_id = $1 ORDER BY created_at LIMIT 1",
          [organizationId],
        )
      ).rows[0]!.id,
  );
}

function hostPidOf(url: string, internId: string): Promise<number> {
  return withDatabase(
    url,
    async (client) =>
      (await client.query<{ pid: number }>("SELECT pid FROM intern_hosts WHERE intern_id = $1", [internId])).rows[0]!
        .pid,
  );
}

function statusKb(pid: number, field: string): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
}

function rssMiB(pid: number): number {
  return Math.round(statusKb(pid, "VmRSS") / 1024);
}

function peakRssMiB(pid: number): number {
  return Math.round(statusKb(pid, "VmHWM") / 1024);
}
