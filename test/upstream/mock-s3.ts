import { createHash, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small S3-compatible server for the S3 blob store, path-style (`/<bucket>/<key>`), in memory:
 * PutObject, GetObject, DeleteObject and the multipart upload calls (create, upload part, complete,
 * abort). Requests must carry an AWS Signature V4 Authorization header (its signature is not
 * checked). `failParts` makes UploadPart answer 500, as a store in trouble would; `partDelayMs`
 * makes it slow.
 */
export interface MockS3 {
  /** Endpoint for the S3 client, e.g. http://127.0.0.1:4567 */
  url: string;
  bucket: string;
  objects: Map<string, Buffer>;
  /** Multipart uploads created and neither completed nor aborted. */
  openUploads(): number;
  /** Parts received, over all uploads. */
  readonly partsReceived: number;
  failParts: boolean;
  /** Each UploadPart is answered this much later (a slow bucket). */
  partDelayMs: number;
  close(): Promise<void>;
}

interface Upload {
  key: string;
  parts: Map<number, Buffer>;
}

export async function startMockS3(bucket = "gateway-files"): Promise<MockS3> {
  const uploads = new Map<string, Upload>();
  let parts = 0;
  const mock: MockS3 = {
    url: "",
    bucket,
    objects: new Map(),
    openUploads: () => uploads.size,
    get partsReceived() {
      return parts;
    },
    failParts: false,
    partDelayMs: 0,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://s3");
      const [, bucketName = "", ...rest] = url.pathname.split("/");
      const key = rest.map(decodeURIComponent).join("/");
      const body = Buffer.concat(chunks);
      if (!/^AWS4-HMAC-SHA256 /.test(req.headers.authorization ?? ""))
        return xmlError(res, 403, "AccessDenied", "Missing AWS Signature Version 4");
      if (bucketName !== bucket) return xmlError(res, 404, "NoSuchBucket", "The specified bucket does not exist");
      const uploadId = url.searchParams.get("uploadId");
      const etag = `"${createHash("md5").update(body).digest("hex")}"`;
      if (req.method === "POST" && url.searchParams.has("uploads")) {
        const id = randomUUID();
        uploads.set(id, { key, parts: new Map() });
        return xml(
          res,
          200,
          `<InitiateMultipartUploadResult><Bucket>${bucket}</Bucket><Key>${key}</Key>` +
            `<UploadId>${id}</UploadId></InitiateMultipartUploadResult>`,
        );
      }
      if (uploadId !== null) {
        const upload = uploads.get(uploadId);
        if (!upload || upload.key !== key)
          return xmlError(res, 404, "NoSuchUpload", "The specified upload does not exist");
        if (req.method === "PUT") {
          if (mock.failParts) return xmlError(res, 500, "InternalError", "mock S3: parts are failing");
          parts += 1;
          upload.parts.set(Number(url.searchParams.get("partNumber")), body);
          const answer = () => {
            res.writeHead(200, { etag });
            res.end();
          };
          if (mock.partDelayMs > 0) setTimeout(answer, mock.partDelayMs);
          else answer();
          return;
        }
        if (req.method === "POST") {
          const numbers = [...body.toString("utf8").matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) =>
            Number(m[1]),
          );
          if (numbers.length === 0 || numbers.some((n) => !upload.parts.has(n)))
            return xmlError(res, 400, "InvalidPart", "A listed part was not uploaded");
          mock.objects.set(key, Buffer.concat(numbers.map((n) => upload.parts.get(n)!)));
          uploads.delete(uploadId);
          return xml(
            res,
            200,
            `<CompleteMultipartUploadResult><Bucket>${bucket}</Bucket>` +
              `<Key>${key}</Key><ETag>${etag}</ETag></CompleteMultipartUploadResult>`,
          );
        }
        if (req.method === "DELETE") {
          uploads.delete(uploadId);
          res.writeHead(204);
          return res.end();
        }
      }
      if (req.method === "PUT") {
        mock.objects.set(key, body);
        res.writeHead(200, { etag });
        return res.end();
      }
      if (req.method === "GET") {
        const object = mock.objects.get(key);
        if (!object) return xmlError(res, 404, "NoSuchKey", "The specified key does not exist.");
        res.writeHead(200, {
          "content-type": "application/octet-stream",
          "content-length": object.length,
          etag: `"${createHash("md5").update(object).digest("hex")}"`,
        });
        return res.end(object);
      }
      if (req.method === "DELETE") {
        mock.objects.delete(key);
        res.writeHead(204);
        return res.end();
      }
      xmlError(res, 405, "MethodNotAllowed", "mock S3: not supported");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return mock;
}

function xml(res: http.ServerResponse, status: number, body: string): void {
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`;
  res.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function xmlError(res: http.ServerResponse, status: number, code: string, message: string): void {
  xml(res, status, `<Error><Code>${code}</Code><Message>${message}</Message><RequestId>mock</RequestId></Error>`);
}
