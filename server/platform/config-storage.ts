import path from "node:path";
import { boolVar, type Env, nonEmpty } from "./config-vars.js";

/**
 * A directory (GATEWAY_FILES_DIR, default `<dataDir>/files`), or an S3-compatible bucket once
 * GATEWAY_S3_BUCKET is set. Without an access key pair the AWS SDK's own credential chain applies.
 */
export type StorageConfig =
  | { kind: "local"; dir: string }
  | {
      kind: "s3";
      bucket: string;
      /** Prepended to every object key, e.g. `gateway/`. */
      prefix: string;
      region: string;
      /** An S3-compatible service (MinIO, R2, …); unset means AWS. */
      endpoint: string | undefined;
      forcePathStyle: boolean;
      /** Never logged. */
      credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
    };

export function storageConfig(env: Env, dataDir: string): StorageConfig {
  const bucket = nonEmpty(env.GATEWAY_S3_BUCKET);
  if (!bucket)
    return { kind: "local", dir: path.resolve(nonEmpty(env.GATEWAY_FILES_DIR) ?? path.join(dataDir, "files")) };
  const accessKeyId = nonEmpty(env.GATEWAY_S3_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.GATEWAY_S3_SECRET_ACCESS_KEY);
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new Error("GATEWAY_S3_ACCESS_KEY_ID and GATEWAY_S3_SECRET_ACCESS_KEY must be set together");
  }
  const endpoint = nonEmpty(env.GATEWAY_S3_ENDPOINT);
  return {
    kind: "s3",
    bucket,
    prefix: env.GATEWAY_S3_PREFIX ?? "",
    region: nonEmpty(env.GATEWAY_S3_REGION) ?? "us-east-1",
    endpoint,
    // S3-compatible services mostly want the bucket in the path; AWS wants it in the hostname.
    forcePathStyle: boolVar(env, "GATEWAY_S3_FORCE_PATH_STYLE", endpoint !== undefined),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
  };
}
