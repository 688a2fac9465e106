import fs from "node:fs/promises";
import path from "node:path";
import { makeTempDir } from "./temp-dirs.js";

/**
 * Writes a GATEWAY_CONFIG file (JSON, or YAML text as given) to a fresh temporary directory, removed
 * when the test process exits (a test may rewrite the file while its gateway runs).
 */
export async function writeCatalogFile(
  config: object | string,
  extension = typeof config === "string" ? "yaml" : "json",
): Promise<string> {
  const file = path.join(makeTempDir("gateway-catalog"), `gateway.${extension}`);
  await fs.writeFile(file, typeof config === "string" ? config : JSON.stringify(config, null, 2));
  return file;
}
