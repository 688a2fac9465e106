import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { descriptorIndex } from "../platform/grpc/descriptor-index.js";
import { healthService } from "../platform/grpc/health-service.js";
import { reflectionService, reflectionServiceV1alpha } from "../platform/grpc/reflection-service.js";
import type { Readiness } from "./readiness.js";

export interface GrpcInfrastructureOptions {
  /** The API's services (wire/services.ts), which health answers for and reflection describes. */
  services: readonly DescService[];
  /** The same answer as `GET /readyz`: SERVING when ready, NOT_SERVING otherwise, from the drain on for good. */
  readiness: Pick<Readiness, "check" | "draining">;
  /** GATEWAY_GRPC_REFLECTION: off, the reflection services are not served at all (UNIMPLEMENTED). */
  reflection: boolean;
}

/**
 * gRPC's own services beside the API on the core's ports (gRPC on GRPC_PORT; Connect and gRPC-Web
 * on PORT too): grpc.health.v1.Health, and server reflection unless it is switched off. They are
 * public and carry no gateway semantics, so they run with an empty interceptor chain: connect-es
 * lets per-service handler options replace the adapter's (`{ ...adapterOptions, ...serviceOptions }`
 * in createConnectRouter), which keeps them out of authentication and the proto's access and field
 * rules. They are not in `allServices`, so the facade gives them no REST route.
 */
export function registerGrpcInfrastructure(
  router: ConnectRouter,
  { services, readiness, reflection }: GrpcInfrastructureOptions,
): void {
  const infrastructure = reflection ? [Health, ServerReflection, ServerReflectionV1alpha] : [Health];
  const served = [...services, ...infrastructure];
  const own = { interceptors: [] };
  const serving = { ready: async () => (await readiness.check()).ready, draining: () => readiness.draining() };
  router.service(
    Health,
    healthService(
      serving,
      served.map((service) => service.typeName),
    ),
    own,
  );
  if (!reflection) return;
  const index = descriptorIndex(served);
  router.service(ServerReflection, reflectionService(index), own);
  router.service(ServerReflectionV1alpha, reflectionServiceV1alpha(index), own);
}
