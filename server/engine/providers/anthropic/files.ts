/**
 * The Anthropic Files API (`/v1/files`, beta): its file object is the API's File (docs/api/files.md) field for
 * field. Files uploaded by a client are not downloadable there; files a tool created are.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { ANTHROPIC_VERSION } from "./chat.js";
import { isObject, stringOr } from "../json-shape.js";
import { pathSegment } from "../native-batch-wire.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import type { ProviderFile, ProviderFileApi } from "../files-api.js";
import { postFile, sizeOf } from "../file-upload-http.js";
import { callUpstream, discardBody, readJsonObject } from "../upstream-http.js";

const FILES_BETA = "files-api-2025-04-14";

export const anthropicFiles: ProviderFileApi = {
  async upload(target, file, signal) {
    return fileOf(await postFile(target, headersFor(target), {}, file, signal));
  },

  async get(target, id, signal) {
    return fileOf(
      await readJsonObject(
        await callUpstream(
          target,
          { method: "GET", path: `/files/${pathSegment(id)}`, headers: headersFor(target) },
          signal,
        ),
      ),
    );
  },

  async list(target, { limit, after }, signal) {
    const query = new URLSearchParams({ limit: String(limit) });
    if (after !== undefined) query.set("after_id", after);
    const page = await readJsonObject(
      await callUpstream(target, { method: "GET", path: `/files?${query}`, headers: headersFor(target) }, signal),
    );
    if (!Array.isArray(page.data)) throw new UpstreamError("protocol", "the upstream file list has no data array");
    return { files: page.data.filter(isObject).map(fileOf), hasMore: page.has_more === true };
  },

  content(target, id, signal) {
    const { accept: _accept, ...headers } = headersFor(target);
    return callUpstream(target, { method: "GET", path: `/files/${pathSegment(id)}/content`, headers }, signal);
  },

  async remove(target, id, signal) {
    await discardBody(
      await callUpstream(
        target,
        { method: "DELETE", path: `/files/${pathSegment(id)}`, headers: headersFor(target) },
        signal,
      ),
    );
  },
};

function headersFor(target: UpstreamTarget): Record<string, string> {
  return {
    "x-api-key": target.apiKey,
    "anthropic-version": ANTHROPIC_VERSION,
    "anthropic-beta": FILES_BETA,
    accept: "application/json",
  };
}

function fileOf(json: JsonObject): ProviderFile {
  if (typeof json.id !== "string" || json.id === "") throw new UpstreamError("protocol", "the upstream file has no id");
  const created = new Date(stringOr(json.created_at, ""));
  return {
    id: json.id,
    filename: stringOr(json.filename, ""),
    mimeType: typeof json.mime_type === "string" && json.mime_type !== "" ? json.mime_type : undefined,
    sizeBytes: sizeOf(json.size_bytes),
    createdAt: Number.isNaN(created.getTime()) ? new Date(0) : created,
    downloadable: json.downloadable === true,
  };
}
