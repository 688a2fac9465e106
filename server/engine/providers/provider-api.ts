import type { ChatApi, ChatProbe } from "./chat-api.js";
import type { ProviderFileApi } from "./files-api.js";
import type { NativeApis } from "./native-api.js";
import type { NativeBatchApi } from "./native-batch-api.js";
import type { VideoApi } from "./video-api.js";

/**
 * The one interface between the gateway and an upstream provider kind: its parts, each in the
 * provider-neutral terms the services speak (chat in the OpenAI wire format, files, native
 * batches, video jobs). Each kind's folder (openai/, anthropic/) translates to what its provider
 * speaks and back, so routing, governance and accounting never see a provider's dialect.
 * A part a kind lacks is undefined; registry.ts holds one line per kind.
 */
export interface Provider {
  chat: ChatApi;
  files: ProviderFileApi | undefined;
  nativeBatches: NativeBatchApi | undefined;
  video: VideoApi | undefined;
  /** The API formats besides chat it speaks itself (native-api.ts): those calls pass through untranslated. */
  native: NativeApis;
  /** Where the provider's API lives when GATEWAY_CONFIG names no provider with its slug. */
  publicBaseUrl: string;
  /** The chat request parameters its API documents: an endpoint's default `supported_parameters`. */
  chatParameters: readonly string[];
  /** What a private endpoint's base URL (the host's root, as users name it) lacks before the API's paths. */
  privateRootPath: string;
  probe: ChatProbe;
}
