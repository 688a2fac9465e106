import type { JsonObject } from "@bufbuild/protobuf";
import type { UpstreamUsage } from "../providers/provider.js";

/** One cached answer, as stored and as a hit serves it. */
export interface CachedAnswer {
  /**
   * The answer as it was given, in the non-streamed form: a `chat.completion` (a streamed answer
   * is stored as the completion its chunks make) or an embeddings `list`.
   */
  answer: JsonObject;
  /** The call's token counts, which a hit reports and records again. */
  usage: UpstreamUsage;
  /** What the call that produced it cost (exact decimal USD): what each hit saves. */
  costUsd: string;
  /** The endpoint that answered; the key names it too, so a hit never crosses an endpoint. */
  endpointId: string;
  /** Unix seconds the answer was made: a hit keeps its `created`. */
  created: number;
}
