/**
 * The validation run of a draft: named checks in order, each needing the ones before it. Once a
 * check fails the rest are reported as skipped. Messages carry status codes and generic wording
 * only: never the credential, nor anything the upstream sent (its body or headers could echo the
 * credential, or be written to mislead whoever reads the result).
 *
 * @module
 */
import { create } from "@bufbuild/protobuf";
import {
  PrivateEndpointCheckSchema,
  PrivateEndpointValidationSchema,
  type PrivateEndpointCheck,
  type PrivateEndpointValidation,
} from "../../../gen/gateway/v1/private_endpoints_pb.js";
import { findByokProvider, usableCredential } from "../../engine/index.js";
import type { PrivateEndpointRow } from "../../platform/db/governance-models.js";
import {
  DestinationRefused,
  type DestinationGuard,
  type VettedDestination,
} from "../../../egress/destination-guard.js";
import { expectedShapeName, hasExpectedShape, testCall } from "./provider-dialects.js";
import { MAX_BODY_BYTES, probeUpstream, type ProbeOutcome } from "../../platform/outbound/upstream-probe.js";

const CHECKS = ["credential", "destination", "reachable", "auth_ok", "model_ok"] as const;
type CheckName = (typeof CHECKS)[number];

export interface ValidationInput {
  endpoint: PrivateEndpointRow;
  workspace: { id: string; slug: string };
  masterKey: Buffer;
  guard: DestinationGuard;
  timeoutMs: number;
  ca: readonly string[];
}

export async function runValidation(input: ValidationInput): Promise<PrivateEndpointValidation> {
  const checks: PrivateEndpointCheck[] = [];
  const pass = (name: CheckName): void => {
    checks.push(create(PrivateEndpointCheckSchema, { name, passed: true }));
  };
  const fail = (name: CheckName, message: string): void => {
    checks.push(create(PrivateEndpointCheckSchema, { name, passed: false, message }));
  };

  await (async () => {
    const { endpoint } = input;
    const provider = findByokProvider(endpoint.providerSlug);
    if (!provider) return fail("credential", `provider '${endpoint.providerSlug}' no longer supports BYOK`);
    const credential = await usableCredential(input.masterKey, {
      organizationId: endpoint.organizationId,
      workspaceId: input.workspace.id,
      provider: provider.slug,
    });
    if (credential.state === "missing")
      return fail("credential", `no enabled ${provider.name} BYOK credential in workspace '${input.workspace.slug}'`);
    if (credential.state === "unreadable") {
      return fail(
        "credential",
        `the newest ${provider.name} BYOK credential of workspace ` +
          `'${input.workspace.slug}' cannot be decrypted with the gateway's master key`,
      );
    }
    pass("credential");

    if (!endpoint.baseUrl) return fail("destination", "the endpoint has no base_url");
    const call = testCall(provider.kind, endpoint.baseUrl, endpoint.upstreamModelId, credential.secret);
    let destination: VettedDestination;
    try {
      destination = await input.guard.vet(call.url);
    } catch (err) {
      if (err instanceof DestinationRefused) return fail("destination", err.message);
      throw err;
    }
    pass("destination");

    const outcome = await probeUpstream({ ...call, destination, timeoutMs: input.timeoutMs, ca: input.ca });
    if (outcome.kind !== "response") return fail("reachable", unreachableMessage(outcome, input.timeoutMs));
    pass("reachable");

    if (outcome.status === 401 || outcome.status === 403)
      return fail("auth_ok", `upstream rejected the credential (HTTP ${outcome.status})`);
    pass("auth_ok");

    if (outcome.status >= 300 && outcome.status < 400)
      return fail("model_ok", `upstream answered HTTP ${outcome.status}; redirects are not followed`);
    if (outcome.status < 200 || outcome.status >= 300)
      return fail("model_ok", `upstream answered HTTP ${outcome.status}`);
    if (outcome.truncated) return fail("model_ok", `the response is larger than ${MAX_BODY_BYTES / 1024} KiB`);
    if (!hasExpectedShape(provider.kind, parseJson(outcome.body)))
      return fail("model_ok", `the response is not ${expectedShapeName(provider.kind)}`);
    pass("model_ok");
  })();

  const failed = checks.find((check) => !check.passed);
  for (const name of CHECKS.slice(checks.length)) {
    checks.push(
      create(PrivateEndpointCheckSchema, {
        name,
        passed: false,
        message: `skipped: ${failed?.name ?? "an earlier check"} failed`,
      }),
    );
  }
  return create(PrivateEndpointValidationSchema, { passed: checks.every((check) => check.passed), checks });
}

function unreachableMessage(outcome: Exclude<ProbeOutcome, { kind: "response" }>, timeoutMs: number): string {
  switch (outcome.kind) {
    case "timeout":
      return `timed out: no complete HTTP response within ${timeoutMs} ms`;
    case "tls_failed":
      return `TLS connection failed (${outcome.code})`;
    case "connect_failed":
      return `connection failed (${outcome.code})`;
  }
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}
