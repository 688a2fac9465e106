import type { DescService } from "@bufbuild/protobuf";
import { DecisionsService } from "../gen/gateway/alpha/decisions_pb.js";
import { ActivityService } from "../gen/gateway/v1/activity_pb.js";
import { AnalyticsService } from "../gen/gateway/v1/analytics_pb.js";
import { BatchesService } from "../gen/gateway/v1/batches_pb.js";
import { ByokService } from "../gen/gateway/v1/byok_pb.js";
import { EdgeService } from "../gen/gateway/v1/edge_pb.js";
import { EndUsersService } from "../gen/gateway/v1/end_users_pb.js";
import { FilesService } from "../gen/gateway/v1/files_pb.js";
import { GuardrailsService } from "../gen/gateway/v1/guardrails_pb.js";
import { InferenceService } from "../gen/gateway/v1/inference_pb.js";
import { InternsService } from "../gen/gateway/v1/interns_pb.js";
import { KeysService } from "../gen/gateway/v1/keys_pb.js";
import { MembersService } from "../gen/gateway/v1/members_pb.js";
import { ModelsService } from "../gen/gateway/v1/models_pb.js";
import { OperatorService } from "../gen/gateway/v1/operator_pb.js";
import { OrganizationService } from "../gen/gateway/v1/organization_pb.js";
import { PrivateEndpointsService } from "../gen/gateway/v1/private_endpoints_pb.js";
import { VaultService } from "../gen/gateway/v1/vault_pb.js";
import { VideosService } from "../gen/gateway/v1/videos_pb.js";
import { WorkspacesService } from "../gen/gateway/v1/workspaces_pb.js";

/**
 * Every service of the API, the wire contract both sides share: the core serves this list and the
 * REST facade compiles its route table from it (methods without a `google.api.http` rule, like all
 * of OperatorService and EdgeService, get no REST route).
 */
export const allServices: readonly DescService[] = [
  KeysService,
  OrganizationService,
  MembersService,
  WorkspacesService,
  EndUsersService,
  AnalyticsService,
  ActivityService,
  GuardrailsService,
  ByokService,
  PrivateEndpointsService,
  ModelsService,
  InferenceService,
  BatchesService,
  FilesService,
  VideosService,
  DecisionsService,
  InternsService,
  VaultService,
  OperatorService,
  EdgeService,
];
