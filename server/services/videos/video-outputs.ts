import type { Readable } from "node:stream";
import type { BlobStore } from "../../platform/storage/blob-store.js";
import type { StoredOutput, VideoJobRow } from "./video-store.js";
import type { JobTarget } from "./video-upstream.js";

/**
 * The gateway's own copy of a completed job's outputs, in the blob store under
 * `videos/<workspace>/<job>/<index>`: copied from the provider when the job completes (so content
 * stays available however long the provider keeps it), served by GET /videos/{id}/content, and
 * deleted by the retention sweep once the job's `expires_at` has passed. Writing the same key
 * again replaces it, so a copy repeated by an instance that took a job over is harmless.
 */
export function outputKey(job: Pick<VideoJobRow, "id" | "workspace_id">, index: number): string {
  return `videos/${job.workspace_id}/${job.id}/${index}`;
}

export async function copyOutputs(
  blobs: BlobStore,
  handle: JobTarget,
  job: VideoJobRow,
  upstreamId: string,
  count: number,
  signal: AbortSignal,
): Promise<StoredOutput[]> {
  const outputs: StoredOutput[] = [];
  for (let index = 0; index < count; index++) {
    const output = await handle.api.content(handle.target, upstreamId, index, signal);
    const { size } = await blobs.put(outputKey(job, index), output.body, { contentType: output.contentType, signal });
    outputs.push({ content_type: output.contentType, size });
  }
  return outputs;
}

export async function readOutput(blobs: BlobStore, job: VideoJobRow, index: number): Promise<Readable | undefined> {
  return blobs.get(outputKey(job, index));
}

export async function deleteOutputs(
  blobs: BlobStore,
  job: Pick<VideoJobRow, "id" | "workspace_id" | "outputs">,
): Promise<void> {
  for (let index = 0; index < job.outputs.length; index++) await blobs.delete(outputKey(job, index));
}
