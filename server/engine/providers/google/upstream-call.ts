import type { JsonObject } from "@bufbuild/protobuf";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import { abortedError, postUpstream, type UpstreamResponse } from "../upstream-http.js";
import { accessToken, forgetAccessToken } from "./access-tokens.js";

/** `{baseUrl}/models/{model}:{method}`, the model escaped as the one path segment it is. */
export function modelPath(model: string, method: string): string {
  return `/models/${encodeURIComponent(model)}:${method}`;
}

/**
 * One POST to the Gemini API (`x-goog-api-key`) or to Vertex AI (a service account's bearer
 * token). A 401 from Vertex means the token went bad before its time (revoked, or the account's
 * roles changed): the call is made once more with a freshly exchanged token.
 */
export async function postGoogle(
  target: UpstreamTarget,
  path: string,
  payload: JsonObject,
  accept: string,
  signal: AbortSignal,
): Promise<UpstreamResponse> {
  const account = target.settings?.googleServiceAccount;
  if (!account) return postUpstream(target, path, { "x-goog-api-key": target.apiKey, accept }, payload, signal);
  let token = await accessToken(account, target.apiKey);
  const send = async () => {
    if (signal.aborted) throw abortedError();
    return postUpstream(target, path, { authorization: `Bearer ${token}`, accept }, payload, signal);
  };
  try {
    return await send();
  } catch (err) {
    if (!(err instanceof UpstreamError) || err.failure !== "status" || err.options.status !== 401) throw err;
    forgetAccessToken(account);
    token = await accessToken(account, target.apiKey);
    return send();
  }
}
