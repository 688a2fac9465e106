/**
 * Files of a workspace. Without `provider` the bytes go to the gateway's blob
 * store (`deps.blobs`) and a row records them, written only once the bytes are stored: a failed or
 * cancelled upload leaves neither. With `provider` the file is uploaded to that provider with the
 * workspace's own key, after it has been spooled to local disk and validated in full (the provider
 * gets a complete file with its size); the row then only remembers the detected type.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { FileProviderSchema, type FilesService } from "../../../gen/gateway/v1/files_pb.js";
import { callerOf, type Caller } from "../../platform/rpc/auth.js";
import { gatewayError } from "../../../wire/errors.js";
import { decodeCursor, encodeCursor, isCursorTime } from "../../platform/rpc/pagination.js";
import { findWorkspace, workspaceOf, type WorkspaceScope } from "../../platform/rpc/scope.js";
import { wireName } from "../../../wire/enums.js";
import type { Deps } from "../deps.js";
import type { FileProvider } from "./file-store.js";
import { createLocalBlobStore } from "../../platform/storage/local-blob-store.js";
import { deleteFileRow, findFileRow, insertFileRow, listFileRows, providerFileRows } from "./file-store.js";
import { contentDisposition, ownFile, providerFile } from "./file-view.js";
import { providerFileAccess, providerFileError, type ProviderFileAccess } from "./provider-file-access.js";
import { openUpload, UploadContent } from "./upload-stream.js";

const DEFAULT_PAGE = 20;
const DEFAULT_FILENAME = "file";

export function filesService(deps: Deps): ServiceImpl<typeof FilesService> {
  const { sequelize, blobs, log } = deps;
  const spool = createLocalBlobStore(path.join(deps.config.dataDir, "spool"));

  /** A failure of our own storage or database is a 503; the client's own going away a 499. */
  function uploadError(err: unknown, signal: AbortSignal): unknown {
    if (err instanceof ConnectError) return err;
    if (signal.aborted) return gatewayError(499, "Request cancelled by the client");
    log.error(
      { err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) },
      "file upload could not be stored",
    );
    return gatewayError(503, "The file could not be stored; try again", { retryable: true });
  }

  async function uploadToProvider(
    access: ProviderFileAccess,
    scope: WorkspaceScope,
    filename: string,
    content: AsyncIterable<Uint8Array>,
    upload: UploadContent,
    signal: AbortSignal,
  ) {
    const spoolKey = randomBytes(12).toString("hex");
    try {
      const { size } = await spool.put(spoolKey, content, { signal });
      const body = await spool.get(spoolKey);
      if (!body) throw new Error("the spooled upload vanished");
      const mimeType = upload.mimeType!;
      const uploaded = await access.api
        .upload(access.uploadTarget, { filename, mimeType, size, body }, signal)
        .catch((err: unknown) => {
          body.destroy();
          throw providerFileError(err, access.kind);
        });
      try {
        const row = await insertFileRow(sequelize, scope, {
          location: access.kind,
          id: uploaded.id,
          filename,
          mime_type: mimeType,
          size_bytes: size,
          blob_key: null,
        });
        return providerFile({ ...uploaded, filename: uploaded.filename || filename }, row);
      } catch (err) {
        // Nothing would know of the provider's copy: take it back.
        await access.api
          .remove(access.target, uploaded.id, AbortSignal.timeout(access.target.timeoutMs))
          .catch(() => undefined);
        throw err;
      }
    } catch (err) {
      throw uploadError(err, signal);
    } finally {
      await spool.delete(spoolKey).catch(() => undefined);
    }
  }

  return {
    async uploadFile(requests, ctx) {
      const caller = callerOf(ctx);
      const { metadata, chunks } = await openUpload(requests);
      const scope = await workspaceScope(caller, metadata.workspaceId);
      const filename = filenameOf(metadata.filename);
      const upload = new UploadContent();
      const content = upload.inspect(chunks);
      const provider = providerOf(metadata.provider);
      // Settled before any content is read, so a missing key fails at once.
      if (provider)
        return uploadToProvider(
          await providerFileAccess(deps, scope, provider),
          scope,
          filename,
          content,
          upload,
          ctx.signal,
        );

      const id = `file_${randomBytes(12).toString("hex")}`;
      const blobKey = `files/${scope.workspaceId}/${id}`;
      try {
        const { size } = await blobs.put(blobKey, content, { signal: ctx.signal });
        ctx.signal.throwIfAborted();
        return ownFile(
          await insertFileRow(sequelize, scope, {
            location: "own",
            id,
            filename,
            mime_type: upload.mimeType!,
            size_bytes: size,
            blob_key: blobKey,
          }),
        );
      } catch (err) {
        await blobs
          .delete(blobKey)
          .catch((cause: unknown) =>
            log.warn({ blobKey, err: String(cause) }, "bytes of a failed upload could not be removed"),
          );
        throw uploadError(err, ctx.signal);
      }
    },

    async getFile(req, ctx) {
      const scope = await workspaceScope(callerOf(ctx), req.workspaceId);
      const provider = providerOf(req.provider);
      if (!provider) return ownFile(await ownRow(scope, req.fileId));
      const access = await providerFileAccess(deps, scope, provider);
      const file = await access.api.get(access.target, req.fileId, ctx.signal).catch((err: unknown) => {
        throw providerFileError(err, provider, req.fileId);
      });
      return providerFile(file, (await providerFileRows(sequelize, scope, provider, [file.id])).get(file.id));
    },

    async listFiles(req, ctx) {
      const scope = await workspaceScope(callerOf(ctx), req.workspaceId);
      const provider = providerOf(req.provider);
      const limit = req.limit ?? DEFAULT_PAGE;
      if (!provider) {
        const after = req.cursor === undefined ? undefined : ownCursor(req.cursor);
        const rows = await listFileRows(sequelize, scope, limit + 1, after);
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        const hasMore = rows.length > limit;
        return {
          data: page.map(ownFile),
          hasMore,
          firstId: page[0]?.id,
          lastId: last?.id,
          cursor: hasMore && last ? encodeCursor(["own", last.cursor_at, last.id]) : undefined,
        };
      }
      const after = req.cursor === undefined ? undefined : providerCursor(req.cursor, provider);
      const access = await providerFileAccess(deps, scope, provider);
      const { files, hasMore } = await access.api
        .list(access.target, { limit, after }, ctx.signal)
        .catch((err: unknown) => {
          throw providerFileError(err, provider);
        });
      const rows = await providerFileRows(
        sequelize,
        scope,
        provider,
        files.map((file) => file.id),
      );
      const last = files.at(-1);
      return {
        data: files.map((file) => providerFile(file, rows.get(file.id))),
        hasMore,
        firstId: files[0]?.id,
        lastId: last?.id,
        cursor: hasMore && last ? encodeCursor([provider, last.id]) : undefined,
      };
    },

    async deleteFile(req, ctx) {
      const scope = await workspaceScope(callerOf(ctx), req.workspaceId);
      const provider = providerOf(req.provider);
      if (!provider) {
        const row = await deleteFileRow(sequelize, scope, "own", req.fileId);
        if (!row) throw notFound(req.fileId);
        // The row went first: at worst unreferenced bytes remain, never a file without content.
        await blobs
          .delete(row.blob_key!)
          .catch((err: unknown) =>
            log.warn({ blobKey: row.blob_key, err: String(err) }, "bytes of a deleted file could not be removed"),
          );
      } else {
        const access = await providerFileAccess(deps, scope, provider);
        await access.api.remove(access.target, req.fileId, ctx.signal).catch((err: unknown) => {
          throw providerFileError(err, provider, req.fileId);
        });
        await deleteFileRow(sequelize, scope, provider, req.fileId);
      }
      return { id: req.fileId, type: "file", deleted: true };
    },

    async *getFileContent(req, ctx) {
      const scope = await workspaceScope(callerOf(ctx), req.workspaceId);
      const provider = providerOf(req.provider);
      const { filename, contentType, chunks } = provider
        ? await providerContent(provider, scope, req.fileId, ctx)
        : await ownContent(scope, req.fileId);
      ctx.responseHeader.set("content-disposition", contentDisposition(filename));
      // Stored content is the caller's, not ours: a browser must not reinterpret it.
      ctx.responseHeader.set("x-content-type-options", "nosniff");
      let first = true;
      for await (const chunk of chunks) {
        yield first ? { contentType, data: chunk } : { data: chunk };
        first = false;
      }
      if (first) yield { contentType };
    },
  };

  async function ownRow(scope: WorkspaceScope, id: string) {
    const row = await findFileRow(sequelize, scope, "own", id);
    if (!row) throw notFound(id);
    return row;
  }

  async function ownContent(scope: WorkspaceScope, id: string): Promise<Content> {
    const row = await ownRow(scope, id);
    const stream = await blobs.get(row.blob_key!);
    if (!stream) {
      log.error({ file: row.id, blobKey: row.blob_key }, "the stored bytes of a file are missing");
      throw gatewayError(500, `The content of file ${id} is missing from storage`);
    }
    return { filename: row.filename, contentType: row.mime_type, chunks: stream };
  }

  async function providerContent(
    provider: FileProvider,
    scope: WorkspaceScope,
    id: string,
    ctx: HandlerContext,
  ): Promise<Content> {
    const access = await providerFileAccess(deps, scope, provider);
    const [response, rows] = await Promise.all([
      access.api.content(access.target, id, ctx.signal).catch((err: unknown) => {
        throw providerFileError(err, provider, id);
      }),
      providerFileRows(sequelize, scope, provider, [id]),
    ]);
    const row = rows.get(id);
    const upstreamType = response.headers["content-type"];
    async function* chunks(): AsyncGenerator<Uint8Array> {
      try {
        for await (const chunk of response.body) yield chunk as Uint8Array;
      } catch (err) {
        throw gatewayError(
          502,
          `Provider ${provider} broke off the file content (${err instanceof Error ? err.name : "error"})`,
          { retryable: true },
        );
      } finally {
        if (!response.body.readableEnded) response.body.destroy();
      }
    }
    return {
      filename: row?.filename ?? id,
      contentType: row?.mime_type ?? (typeof upstreamType === "string" ? upstreamType : "application/octet-stream"),
      chunks: chunks(),
    };
  }
}

interface Content {
  filename: string;
  contentType: string;
  chunks: AsyncIterable<Uint8Array>;
}

/**
 * The workspace a call acts in: the key's own, or the one `workspace_id` names. A management key
 * may name any workspace of its organization; another key only its own, and any other is answered
 * as if it did not exist (docs/api/conventions.md).
 */
async function workspaceScope(caller: Caller, workspaceId: string | undefined): Promise<WorkspaceScope> {
  if (workspaceId === undefined) return workspaceOf(caller);
  const workspace = await findWorkspace(caller, workspaceId);
  if (!caller.key.isManagement && workspace.id !== caller.key.workspaceId)
    throw gatewayError(404, `Workspace '${workspaceId}' not found`);
  return { ...workspaceOf(caller), workspaceId: workspace.id };
}

function providerOf(value: number): FileProvider | undefined {
  return wireName(FileProviderSchema, value) as FileProvider | undefined;
}

function filenameOf(name: string): string {
  // The name travels in multipart and Content-Disposition headers, where a line break could forge a header.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  if (/[\u0000-\u001f\u007f]/.test(name)) throw gatewayError(400, "filename must not contain control characters");
  return name.trim() === "" ? DEFAULT_FILENAME : name;
}

function notFound(id: string) {
  return gatewayError(404, `File ${id} not found`);
}

function ownCursor(cursor: string): [string, string] {
  const [, at, id] = decodeCursor(cursor, 3, { accept: ([location, at]) => location === "own" && isCursorTime(at!) });
  return [at!, id!];
}

function providerCursor(cursor: string, provider: FileProvider): string {
  const [, id] = decodeCursor(cursor, 2, { accept: ([location]) => location === provider });
  return id!;
}
