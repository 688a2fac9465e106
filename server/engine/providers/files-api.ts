import type { Readable } from "node:stream";
import type { UpstreamTarget } from "./provider.js";
import type { UpstreamResponse } from "./upstream-http.js";

/**
 * A provider's Files API, called with the workspace's own key (the `provider` parameter of the
 * files endpoints). Ids are the provider's; what a provider does not report is undefined.
 */
export interface ProviderFile {
  id: string;
  filename: string;
  /** Anthropic reports one; OpenAI does not. */
  mimeType: string | undefined;
  sizeBytes: number;
  createdAt: Date;
  downloadable: boolean;
}

export interface FileUpload {
  filename: string;
  /** The type the gateway detected. */
  mimeType: string;
  size: number;
  body: Readable;
}

export interface ProviderFileApi {
  upload(target: UpstreamTarget, file: FileUpload, signal: AbortSignal): Promise<ProviderFile>;
  get(target: UpstreamTarget, id: string, signal: AbortSignal): Promise<ProviderFile>;
  /** Newest first; `after` is the id of the previous page's last file. */
  list(
    target: UpstreamTarget,
    page: { limit: number; after: string | undefined },
    signal: AbortSignal,
  ): Promise<{ files: ProviderFile[]; hasMore: boolean }>;
  /** A 2xx response whose unread body is the content. */
  content(target: UpstreamTarget, id: string, signal: AbortSignal): Promise<UpstreamResponse>;
  remove(target: UpstreamTarget, id: string, signal: AbortSignal): Promise<void>;
}
