/**
 * The span attribute names the gateway sets. Stable OpenTelemetry conventions come from the
 * semantic-conventions package; experimental ones (GenAI, RPC) are written out here, as that
 * package advises, instead of being imported from its `incubating` entry point, which may change
 * in a minor release. The RPC names are the ones today's backends and gRPC instrumentations use
 * (`rpc.system`, `rpc.service`, `rpc.method`, `rpc.grpc.status_code`); GenAI spans carry both
 * `gen_ai.provider.name` and its predecessor `gen_ai.system`, which many backends still read.
 *
 * @module
 */

export {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from "@opentelemetry/semantic-conventions";

export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
export const ATTR_GEN_AI_SYSTEM = "gen_ai.system";
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
export const ATTR_GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";

export const ATTR_RPC_SYSTEM = "rpc.system";
export const ATTR_RPC_SERVICE = "rpc.service";
export const ATTR_RPC_METHOD = "rpc.method";
export const ATTR_RPC_GRPC_STATUS_CODE = "rpc.grpc.status_code";
export const ATTR_RPC_CONNECT_RPC_ERROR_CODE = "rpc.connect_rpc.error_code";

/** Ours: the request id the client was told (`x-request-id`), to find a trace from a log line or a ledger row. */
export const ATTR_GATEWAY_REQUEST_ID = "gateway.request_id";
/**
 * Ours: the provider's own name of the model it was asked for. `gen_ai.request.model` is the
 * catalog's (`author/slug`), as the caller and the metrics name it.
 */
export const ATTR_GATEWAY_UPSTREAM_MODEL = "gateway.upstream_model";
/**
 * Ours: the request's end cut a provider's call short (its client left, a deadline, shutdown), on
 * the request's SERVER span; set only when true (wire/upstream-watch.ts).
 */
export const ATTR_GATEWAY_UPSTREAM_CANCELLED = "gateway.upstream_cancelled";
