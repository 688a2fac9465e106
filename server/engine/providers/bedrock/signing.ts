import type { JsonObject } from "@bufbuild/protobuf";
import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import type { AwsCredentials, UpstreamTarget } from "../provider.js";
import { callUpstream, type UpstreamResponse } from "../upstream-http.js";

/**
 * Every Bedrock call: a JSON POST, signed with SigV4 when the target has AWS credentials, else
 * carrying the target's key as a Bedrock API key (a bearer token).
 *
 * The signature covers exactly what is sent: the body's bytes, and the Host header as node would
 * write it (the port only when not the scheme's default), which is therefore set here. The
 * canonical URI is the path as sent (the model id escaped once, as a path segment) escaped once
 * more by the signer, which is what every AWS service but S3 expects.
 */
export async function postBedrock(
  target: UpstreamTarget,
  path: string,
  payload: JsonObject,
  accept: string,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const body = JSON.stringify(payload);
  const aws = target.settings?.aws;
  const headers = aws
    ? await signedHeaders(aws, target.baseUrl, path, body, accept)
    : { authorization: `Bearer ${target.apiKey}`, accept };
  // The secret access key is what error messages must never show, whatever apiKey holds.
  const scrubbed = aws ? { ...target, apiKey: aws.secretAccessKey } : target;
  return callUpstream(
    scrubbed,
    { method: "POST", path, headers, body: { contentType: "application/json", data: body } },
    signal,
  );
}

export async function signedHeaders(
  aws: AwsCredentials,
  baseUrl: string,
  path: string,
  body: string,
  accept: string,
): Promise<Record<string, string>> {
  const url = new URL(baseUrl.replace(/\/+$/, "") + path);
  const credentials = {
    accessKeyId: aws.accessKeyId,
    secretAccessKey: aws.secretAccessKey,
    ...(aws.sessionToken ? { sessionToken: aws.sessionToken } : {}),
  };
  const signer = new SignatureV4({ service: "bedrock", region: aws.region, credentials, sha256: Sha256 });
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signed = await signer.sign({
    method: "POST",
    protocol: url.protocol,
    hostname: url.hostname,
    path: url.pathname,
    query,
    headers: { host: url.host, "content-type": "application/json", accept },
    body,
  });
  return signed.headers;
}
