import { createServiceImplSpec, type ConnectRouter, type MethodImplSpec, type ServiceImpl } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { allServices } from "../../wire/services.js";
import { DecisionsService } from "../../gen/gateway/alpha/decisions_pb.js";
import { ActivityService } from "../../gen/gateway/v1/activity_pb.js";
import { AnalyticsService } from "../../gen/gateway/v1/analytics_pb.js";
import { BatchesService } from "../../gen/gateway/v1/batches_pb.js";
import { ByokService } from "../../gen/gateway/v1/byok_pb.js";
import { EdgeService } from "../../gen/gateway/v1/edge_pb.js";
import { EndUsersService } from "../../gen/gateway/v1/end_users_pb.js";
import { FilesService } from "../../gen/gateway/v1/files_pb.js";
import { GuardrailsService } from "../../gen/gateway/v1/guardrails_pb.js";
import { InferenceService } from "../../gen/gateway/v1/inference_pb.js";
import { InternsService } from "../../gen/gateway/v1/interns_pb.js";
import { KeysService } from "../../gen/gateway/v1/keys_pb.js";
import { MembersService } from "../../gen/gateway/v1/members_pb.js";
import { ModelsService } from "../../gen/gateway/v1/models_pb.js";
import { OperatorService } from "../../gen/gateway/v1/operator_pb.js";
import { OrganizationService } from "../../gen/gateway/v1/organization_pb.js";
import { PrivateEndpointsService } from "../../gen/gateway/v1/private_endpoints_pb.js";
import { VaultService } from "../../gen/gateway/v1/vault_pb.js";
import { VideosService } from "../../gen/gateway/v1/videos_pb.js";
import { WorkspacesService } from "../../gen/gateway/v1/workspaces_pb.js";
import { activityService } from "../services/activity/activity-service.js";
import { analyticsService } from "../services/analytics/analytics-service.js";
import type { BatchRunner } from "../services/batches/batch-runner.js";
import { batchesService } from "../services/batches/batches-service.js";
import { byokService } from "../services/byok/byok-service.js";
import { decisionsService } from "../services/decisions/decisions-service.js";
import { edgeService } from "../services/edge/edge-service.js";
import type { Deps } from "../services/deps.js";
import { endUsersService } from "../services/end-users/end-users-service.js";
import { filesService } from "../services/files/files-service.js";
import { guardrailsService } from "../services/guardrails/guardrails-service.js";
import { internChatService } from "../services/interns/intern-chat-service.js";
import type { InternLifecycle } from "../services/interns/intern-lifecycle.js";
import { internRecordsService } from "../services/interns/interns-service.js";
import { inferenceService } from "../services/inference/inference-service.js";
import { keysService } from "../services/keys/keys-service.js";
import { membersService } from "../services/members/members-service.js";
import { modelsService } from "../services/models/models-service.js";
import { operatorService } from "../services/operator/operator-service.js";
import { organizationService } from "../services/organization/organization-service.js";
import { privateEndpointsService } from "../services/private-endpoints/private-endpoints-service.js";
import { vaultService } from "../services/interns/vault/vault-service.js";
import type { VideoPoller } from "../services/videos/video-poller.js";
import { maxBodyBytesOf } from "../../wire/body-limits.js";
import { videosService } from "../services/videos/videos-service.js";
import { workspacesService } from "../services/workspaces/workspaces-service.js";

/** The implemented methods of each service, built once per gateway. */
export type Implementations = Map<DescService, object>;

/**
 * One service joined to its implementation, typed as a pair (connect-es's `router.service(desc,
 * impl)`): an implementation of another service, or a method with the wrong messages, does not
 * compile.
 */
function joined<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>): [DescService, object] {
  return [service, impl];
}

/** This instance's background work, which services hand work to. */
export interface Workers {
  batches: BatchRunner;
  videos: VideoPoller;
  /** Intern transitions; its supervisor (intern-supervisor.ts) shares its boots and leases. */
  interns: InternLifecycle;
}

export function implementations(deps: Deps, workers: Workers): Implementations {
  return new Map<DescService, object>([
    joined(KeysService, keysService(deps)),
    joined(OrganizationService, organizationService()),
    joined(WorkspacesService, workspacesService(deps)),
    joined(EndUsersService, endUsersService()),
    joined(AnalyticsService, analyticsService(deps)),
    joined(ActivityService, activityService(deps)),
    joined(MembersService, membersService()),
    joined(GuardrailsService, guardrailsService(deps)),
    joined(ByokService, byokService(deps)),
    joined(PrivateEndpointsService, privateEndpointsService(deps)),
    joined(ModelsService, modelsService(deps)),
    joined(OperatorService, operatorService(deps)),
    joined(InferenceService, inferenceService(deps.engine)),
    joined(BatchesService, batchesService(deps, workers.batches.wake)),
    joined(FilesService, filesService(deps)),
    joined(VideosService, videosService(deps, workers.videos)),
    joined(DecisionsService, decisionsService(deps)),
    // The chat relay of the intern runtime joins the record methods here: { ...records, ...chat }.
    joined(InternsService, { ...internRecordsService(deps, workers.interns), ...internChatService(deps) }),
    joined(VaultService, vaultService(deps)),
    joined(EdgeService, edgeService()),
  ]);
}

/**
 * What the core serves: every service of `allServices` with its implementation (a service without
 * one answers Unimplemented). The router and the facade's direct transport both serve this list.
 */
export function servedServices(impls: Implementations): Array<readonly [DescService, object]> {
  return allServices.map((service) => [service, impls.get(service) ?? {}] as const);
}

/** Every method on its own, each reading at most its `max_body_bytes` (wire/body-limits.ts). */
export function registerServices(router: ConnectRouter, impls: Implementations): void {
  for (const [service, impl] of servedServices(impls)) {
    for (const spec of Object.values(createServiceImplSpec(service, impl).methods))
      registerMethod(router, spec, { readMaxBytes: maxBodyBytesOf(spec.method) });
  }
}

/** `router.rpc` for a spec of any kind: the switch lets TypeScript pair each kind's method with its implementation. */
function registerMethod(router: ConnectRouter, spec: MethodImplSpec, options: { readMaxBytes: number }): void {
  switch (spec.kind) {
    case "unary":
      router.rpc(spec.method, spec.impl, options);
      return;
    case "server_streaming":
      router.rpc(spec.method, spec.impl, options);
      return;
    case "client_streaming":
      router.rpc(spec.method, spec.impl, options);
      return;
    case "bidi_streaming":
      router.rpc(spec.method, spec.impl, options);
  }
}
