/**
 * The OpenAI Files API (`/v1/files`). Uploads carry purpose `user_data`, OpenAI's purpose for files
 * used as model inputs. OpenAI refuses to hand back the content of `assistants`, `user_data` and
 * `vision` files, so those are not downloadable; results and batch files are.
 *
 * @module
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { isObject, stringOr } from "../json-shape.js";
import { pathSegment } from "../native-batch-wire.js";
import { UpstreamError, type UpstreamTarget } from "../provider.js";
import type { ProviderFile, ProviderFileApi } from "../files-api.js";
import { dateFromUnixSeconds, postFile, sizeOf } from "../file-upload-http.js";
import { callUpstream, discardBody, readJsonObject } from "../upstream-http.js";

const UPLOAD_PURPOSE = "user_data";
const NOT_DOWNLOADABLE = new Set(["assistants", "user_data", "vision"]);

export const openAiFiles: ProviderFileApi = {
  async upload(target, file, signal) {
    return fileOf(await postFile(target, headersFor(target), { purpose: UPLOAD_PURPOSE }, file, signal));
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
    const query = new URLSearchParams({ limit: String(limit), order: "desc" });
    if (after !== undefined) query.set("after", after);
    const page = await readJsonObject(
      await callUpstream(target, { method: "GET", path: `/files?${query}`, headers: headersFor(target) }, signal),
    );
    if (!Array.isArray(page.data)) throw new UpstreamError("protocol", "the upstream file list has no data array");
    return { files: page.data.filter(isObject).map(fileOf), hasMore: page.has_more === true };
  },

  content(target, id, signal) {
    return callUpstream(
      target,
      {
        method: "GET",
        path: `/files/${pathSegment(id)}/content`,
        headers: { authorization: `Bearer ${target.apiKey}` },
      },
      signal,
    );
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
  return { authorization: `Bearer ${target.apiKey}`, accept: "application/json" };
}

function fileOf(json: JsonObject): ProviderFile {
  if (typeof json.id !== "string" || json.id === "") throw new UpstreamError("protocol", "the upstream file has no id");
  return {
    id: json.id,
    filename: stringOr(json.filename, ""),
    mimeType: undefined,
    sizeBytes: sizeOf(json.bytes),
    createdAt: dateFromUnixSeconds(json.created_at),
    downloadable: !NOT_DOWNLOADABLE.has(stringOr(json.purpose, "")),
  };
}
