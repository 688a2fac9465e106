import { readFileSync } from "node:fs";
import tls from "node:tls";

/**
 * CA certificates trusted when calling private endpoints: Node's bundled roots plus the PEM file
 * of GATEWAY_PRIVATE_ENDPOINT_CA_FILE (an internal CA). Read once at start-up, so a missing or
 * unreadable file stops the gateway with a clear error instead of failing every validation.
 */
export function loadTrustStore(caFile: string | undefined): readonly string[] {
  if (caFile === undefined) return tls.rootCertificates;
  let pem: string;
  try {
    pem = readFileSync(caFile, "utf8");
  } catch (err) {
    throw new Error(
      `GATEWAY_PRIVATE_ENDPOINT_CA_FILE: cannot read ${caFile} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  if (!pem.includes("-----BEGIN CERTIFICATE-----")) {
    throw new Error(`GATEWAY_PRIVATE_ENDPOINT_CA_FILE: ${caFile} holds no PEM certificate`);
  }
  return [...tls.rootCertificates, pem];
}
