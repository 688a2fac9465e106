import fs from "node:fs/promises";
import path from "node:path";
import { startMockUpstream, type MockUpstream } from "../upstream/mock-upstream.js";
import { writeCatalogFile } from "./catalog-file.js";
import { startTestGateway, type TestGateway } from "./gateway.js";
import { makeTempDir, removeTempDir } from "./temp-dirs.js";

/**
 * A test gateway for files: its own data directory (blobs under `files/`, provider uploads spooled
 * under `spool/`), and providers `openai` and `anthropic` pointing at the mock upstream, whose
 * Files APIs answer only to the mock's key (a workspace's own key set to it makes them work).
 */
export interface FilesGateway {
  gw: TestGateway;
  upstream: MockUpstream;
  dataDir: string;
  stop(): Promise<void>;
}

export async function startFilesGateway(env: Record<string, string> = {}): Promise<FilesGateway> {
  const upstream = await startMockUpstream();
  const dataDir = makeTempDir("gateway-files");
  const file = await writeCatalogFile({
    providers: [
      {
        slug: "openai",
        name: "OpenAI",
        kind: "openai",
        base_url: upstream.openaiBaseUrl,
        api_key: "not-the-mock-key",
        timeout_ms: 5000,
      },
      {
        slug: "anthropic",
        name: "Anthropic",
        kind: "anthropic",
        base_url: upstream.anthropicBaseUrl,
        api_key: "not-the-mock-key",
        timeout_ms: 5000,
      },
    ],
    models: [],
  });
  const gw = await startTestGateway({ GATEWAY_CONFIG: file, GATEWAY_DATA_DIR: dataDir, ...env });
  return {
    gw,
    upstream,
    dataDir,
    async stop() {
      await gw.stop();
      await upstream.close();
      await removeTempDir(dataDir);
    },
  };
}

/** Every file under `dir` (recursively), as paths relative to it; none when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
    return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}
