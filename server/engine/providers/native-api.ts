import type { JsonObject } from "@bufbuild/protobuf";
import type { UpstreamTarget, UpstreamUsage } from "./provider.js";

/**
 * The API formats the gateway serves besides chat (POST /responses, POST /messages) that some
 * provider kinds speak themselves. A call in such a format to such a provider goes upstream
 * natively: the client's body as sent (the gateway's own fields removed, `model` rewritten to the
 * upstream id, `stream` set), the provider's answer and events back as they came. Elsewhere the
 * call is translated to chat (server/engine/inference/formats/). Table: docs/providers.md.
 */
export type NativeFormat = "responses" | "messages";

/** A non-streamed native answer: the provider's JSON, and its token counts when it reported them. */
export interface NativeAnswer {
  body: JsonObject;
  usage: UpstreamUsage | undefined;
}

/**
 * A streamed native answer: the provider's events in order, each its JSON payload with `type`.
 * `usage` is known once the terminal event has passed (undefined when the provider reported
 * none). The iterator throws UpstreamError when the stream breaks, or ends, before its terminal
 * event.
 */
export interface NativeEvents {
  events: AsyncIterable<JsonObject>;
  usage(): UpstreamUsage | undefined;
}

/** One format a provider kind speaks natively; every method throws UpstreamError on failure. */
export interface NativeApi {
  /** Whether this target speaks the format (always for some kinds; per host, by its setting, for others). */
  speaks(target: UpstreamTarget): boolean;
  /** `body` is the client's, gateway fields removed; the adapter sets `model` and `stream`. */
  answer(target: UpstreamTarget, body: JsonObject, signal: AbortSignal): Promise<NativeAnswer>;
  /** Resolves once the upstream answered with a success status; events follow. */
  stream(target: UpstreamTarget, body: JsonObject, signal: AbortSignal): Promise<NativeEvents>;
}

/** The formats a kind speaks natively (none for most kinds). */
export type NativeApis = Partial<Record<NativeFormat, NativeApi>>;
