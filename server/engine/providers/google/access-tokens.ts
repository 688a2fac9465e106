import { createHash } from "node:crypto";
import { gaxios, JWT } from "google-auth-library";
import { UpstreamError, type GoogleServiceAccount } from "../provider.js";
import { redactSecrets } from "../upstream-error-body.js";

/**
 * Vertex AI's OAuth tokens, from a service account's signed assertion (google-auth-library's JWT
 * client). One client per service account, kept for the life of the process: it holds the token
 * and fetches a new one shortly before the old one expires.
 */
export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";

/** Where google-auth-library sends every assertion: its token client has no setting for another address. */
const GOOGLE_TOKEN_URL = "https://oauth2.googleapis.com/token";

const clients = new Map<string, JWT>();

/** A bearer token for the account; fails as UpstreamError (401 when Google refuses the account). */
export async function accessToken(account: GoogleServiceAccount, apiKey: string): Promise<string> {
  const key = cacheKey(account);
  let client = clients.get(key);
  if (!client) {
    client = jwtClient(account);
    clients.set(key, client);
  }
  try {
    const { token } = await client.getAccessToken();
    if (!token) throw new UpstreamError("protocol", "the Google token exchange answered without an access token");
    return token;
  } catch (err) {
    // A client whose exchange failed starts afresh next time rather than replaying a stale state.
    if (clients.get(key) === client) clients.delete(key);
    throw tokenError(err, apiKey);
  }
}

/** After a 401 from the API: the cached token is no good, the next call exchanges a new assertion. */
export function forgetAccessToken(account: GoogleServiceAccount): void {
  clients.delete(cacheKey(account));
}

function jwtClient(account: GoogleServiceAccount): JWT {
  const tokenUri = account.tokenUri ?? GOOGLE_TOKEN_URL;
  const client = new JWT({
    email: account.clientEmail,
    key: account.privateKey,
    scopes: [CLOUD_PLATFORM_SCOPE],
    // The assertion's audience is the endpoint that verifies it (a service account key's token_uri).
    ...(tokenUri === GOOGLE_TOKEN_URL ? {} : { additionalClaims: { aud: tokenUri } }),
  });
  if (tokenUri !== GOOGLE_TOKEN_URL) {
    // The library's token request always names Google's endpoint; this points it at the account's.
    client.transporter.interceptors.request.add({
      resolved: async (options) => {
        if (options.url.href === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return options;
      },
    });
  }
  return client;
}

/** The account's identity: its email, where its tokens come from, and (hashed) which key signs them. */
function cacheKey(account: GoogleServiceAccount): string {
  const keyHash = createHash("sha256").update(account.privateKey).digest("hex");
  return `${account.clientEmail}\n${account.tokenUri ?? GOOGLE_TOKEN_URL}\n${keyHash}`;
}

/**
 * Google refusing the assertion (a revoked key, an unknown account) is the credential's fault: 401,
 * as the API would answer a bad key. A failing token endpoint is the upstream's (502), an
 * unreachable one a connection failure, and a key that cannot sign a broken credential again.
 */
function tokenError(err: unknown, apiKey: string): UpstreamError {
  if (err instanceof UpstreamError) return err;
  if (err instanceof gaxios.GaxiosError) {
    const status = err.response?.status;
    if (status === undefined)
      return new UpstreamError(
        "connect",
        `the Google token endpoint could not be reached (${typeof err.code === "string" ? err.code : "UNKNOWN"})`,
      );
    const data: unknown = err.response?.data;
    const detail =
      typeof data === "object" &&
      data !== null &&
      "error_description" in data &&
      typeof data.error_description === "string"
        ? `: ${redactSecrets(data.error_description, apiKey).slice(0, 200)}`
        : "";
    if (status >= 400 && status < 500)
      return new UpstreamError("status", `the Google token exchange refused the service account${detail}`, {
        status: 401,
      });
    return new UpstreamError("status", `the Google token exchange failed with HTTP ${status}`, { status: 502 });
  }
  return new UpstreamError("status", "the service account's private key could not sign a token request", {
    status: 401,
  });
}
