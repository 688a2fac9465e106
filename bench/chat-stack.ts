import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { newKeySecret } from "../server/platform/secrets/key-secret.js";
import { startEmbeddedPostgres } from "../server/platform/db/embedded-postgres.js";
import { createLogger } from "../server/platform/logger.js";
import { writeCatalogFile } from "../test/support/catalog-file.js";
import { freePort, startGatewayProcess, type GatewayProcess } from "../test/support/gateway-process.js";
import { MOCK_UPSTREAM_API_KEY } from "../test/upstream/mock-upstream.js";
import { startChild } from "./children.js";

/**
 * What the batch and stall benchmarks run against: embedded PostgreSQL, the zero-latency mock and
 * a gateway serving `bench/chat` from it, each in its own process (the gateway writes a CPU
 * profile to BENCH_CPU_PROF when set). `stop()` ends all three and removes the data.
 */
export interface ChatStack {
  gateway: GatewayProcess;
  /** The bootstrap management key. */
  key: string;
  /** The embedded cluster's directory (its postmaster.pid names the PostgreSQL processes). */
  postgresDir: string;
  stop(): Promise<void>;
}

/**
 * `nativeBatches`: also `bench/native`, whose provider runs batches through its own batch API (the
 * mock's); `contextLength`: the models' (8,000 by default).
 */
export async function startChatStack(
  name: string,
  env: Record<string, string>,
  options: { nativeBatches?: boolean; contextLength?: number } = {},
): Promise<ChatStack> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `gateway-bench-${name}-`));
  const postgres = await startEmbeddedPostgres(dataDir, 0, createLogger("warn"));
  let mock: ChildProcess | undefined;
  const stopRest = async () => {
    mock?.kill("SIGTERM");
    await postgres.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  };
  try {
    const mockPort = await freePort();
    mock = await startChild(["test/upstream/mock-upstream.ts", "--port", String(mockPort)], /^http:/);
    const mockProvider = {
      slug: "mock",
      kind: "openai",
      base_url: `http://127.0.0.1:${mockPort}/openai/v1`,
      api_key: MOCK_UPSTREAM_API_KEY,
    };
    const model = (id: string, name: string, provider: string) => ({
      id,
      name,
      created: 1_700_000_000,
      context_length: options.contextLength ?? 8000,
      endpoints: [{ provider, upstream_model_id: "bench", pricing: { prompt: "0.000001", completion: "0.000002" } }],
    });
    const configFile = await writeCatalogFile(
      options.nativeBatches
        ? {
            providers: [mockProvider, { ...mockProvider, slug: "mock-native", native_batches: true }],
            models: [model("bench/chat", "Bench chat", "mock"), model("bench/native", "Bench native", "mock-native")],
          }
        : { providers: [mockProvider], models: [model("bench/chat", "Bench chat", "mock")] },
    );
    const key = newKeySecret();
    const gateway = await startGatewayProcess({
      databaseUrl: postgres.url,
      key,
      env: { GATEWAY_CONFIG: configFile, ...env },
      nodeArgs: process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [],
    });
    return {
      gateway,
      key,
      postgresDir: path.join(dataDir, "postgres"),
      async stop() {
        await gateway.stop();
        await stopRest();
      },
    };
  } catch (err) {
    await stopRest();
    throw err;
  }
}
