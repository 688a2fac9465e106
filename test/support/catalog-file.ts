import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/** Writes a GATEWAY_CONFIG file (JSON, or YAML text as given) to a fresh temporary directory. */
export async function writeCatalogFile(config: object | string, extension = typeof config === "string" ? "yaml" : "json"): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-catalog-"));
  const file = path.join(dir, `gateway.${extension}`);
  await fs.writeFile(file, typeof config === "string" ? config : JSON.stringify(config, null, 2));
  return file;
}
