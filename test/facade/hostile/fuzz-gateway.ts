import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeCatalogFile } from "../../support/catalog-file.js";
import { startTestGateway, type TestGateway } from "../../support/gateway.js";
import { TestInternHosts } from "../../support/interns-hosts.js";
import { seedOrganization } from "../../support/seed.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";

/**
 * The gateway the hostile-input suites probe: every route reachable with one management key (an
 * organization in the interns and private-endpoint programmes), a catalog whose one chat and one
 * embeddings model are served by the mock upstream, test intern hosts (provisioning starts no
 * process), no rate limit in the way, and a data directory of its own.
 */
export interface FuzzGateway {
  gw: TestGateway;
  url: string;
  /** Management key of the entitled organization. */
  key: string;
  /** Ids the caller owns, by the name of the field that would carry them. */
  known: Record<string, string>;
  /** A model of the catalog, for string fields that name a model. */
  model: string;
  stop(): Promise<void>;
}

export async function startFuzzGateway(): Promise<FuzzGateway> {
  const upstream: MockUpstream = await startMockUpstream({ recordRequests: false });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-fuzz-"));
  const pricing = { prompt: "0.000001", completion: "0.000002" };
  const catalog = await writeCatalogFile({
    providers: [
      {
        slug: "mockai",
        name: "MockAI",
        kind: "openai",
        base_url: upstream.openaiBaseUrl,
        api_key: upstream.apiKey,
        timeout_ms: 2000,
      },
    ],
    models: [
      {
        id: "mock/chat",
        name: "Mock: Chat",
        context_length: 32_000,
        endpoints: [{ provider: "mockai", upstream_model_id: "chat-a", pricing, max_completion_tokens: 1000 }],
      },
      {
        id: "mock/embed",
        name: "Mock: Embed",
        context_length: 8_000,
        output_modalities: ["embeddings"],
        endpoints: [{ provider: "mockai", upstream_model_id: "embed-a", pricing }],
      },
    ],
  });
  const gw = await startTestGateway(
    {
      GATEWAY_CONFIG: catalog,
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_RATE_LIMIT_REQUESTS: "100000000",
      GATEWAY_BATCH_CONCURRENCY: "0",
      GATEWAY_INTERN_DAEMON_TIMEOUT_MS: "300",
    },
    { internHosts: new TestInternHosts() },
  );
  const org = await seedOrganization("fuzz", ["interns", "private_endpoints"]);
  return {
    gw,
    url: gw.url,
    key: org.key,
    known: { workspace_id: org.workspaceId, organization_id: org.organizationId },
    model: "mock/chat",
    async stop() {
      await gw.stop();
      await upstream.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}
