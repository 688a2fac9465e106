import type { DescFile } from "@bufbuild/protobuf";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import type { ServerReflection } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import type { ServerReflection as ServerReflectionV1alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { DescriptorIndex } from "./descriptor-index.js";

/**
 * gRPC server reflection (grpc.reflection.v1, and v1alpha for older grpcurl releases), so
 * `buf curl --reflect`, grpcurl and grpcui call the gateway without its protos. Both versions have
 * the same messages on the wire; one implementation serves both.
 */
export function reflectionService(index: DescriptorIndex): ServiceImpl<typeof ServerReflection> {
  return { serverReflectionInfo: (requests) => answers(index, requests) };
}

export function reflectionServiceV1alpha(index: DescriptorIndex): ServiceImpl<typeof ServerReflectionV1alpha> {
  return { serverReflectionInfo: (requests) => answers(index, requests) };
}

/** A ServerReflectionRequest of either version. */
interface ReflectionRequest {
  host: string;
  messageRequest:
    | { case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices"; value: string }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
}

/** The `message_response` oneof, as either version's init shape accepts it. */
type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: Array<{ name: string }> } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

async function* answers<R extends ReflectionRequest>(index: DescriptorIndex, requests: AsyncIterable<R>) {
  // Files this stream already has: each answer carries the requested file and only the imports not sent yet.
  const sent = new Set<DescFile>();
  for await (const request of requests) {
    yield { validHost: request.host, originalRequest: request, messageResponse: answer(index, request, sent) };
  }
}

function answer(
  index: DescriptorIndex,
  { messageRequest: asked }: ReflectionRequest,
  sent: Set<DescFile>,
): ReflectionAnswer {
  switch (asked.case) {
    case "listServices":
      return { case: "listServicesResponse", value: { service: index.services.map((name) => ({ name })) } };
    case "fileByFilename":
      return files(index, index.fileByName(asked.value), sent, `file "${asked.value}"`);
    case "fileContainingSymbol":
      return files(index, index.fileBySymbol(asked.value), sent, `symbol "${asked.value}"`);
    case "fileContainingExtension": {
      const { containingType, extensionNumber } = asked.value;
      return files(
        index,
        index.fileByExtension(containingType, extensionNumber),
        sent,
        `extension ${extensionNumber} of "${containingType}"`,
      );
    }
    case "allExtensionNumbersOfType": {
      const numbers = index.extensionNumbers(asked.value);
      if (!numbers) return notFound(`type "${asked.value}"`);
      return { case: "allExtensionNumbersResponse", value: { baseTypeName: asked.value, extensionNumber: numbers } };
    }
    case undefined:
      return {
        case: "errorResponse",
        value: { errorCode: Code.InvalidArgument, errorMessage: "the request sets none of the message_request fields" },
      };
  }
}

/** The file, then its transitive imports that this stream has not been sent yet. */
function files(
  index: DescriptorIndex,
  file: DescFile | undefined,
  sent: Set<DescFile>,
  what: string,
): ReflectionAnswer {
  if (!file) return notFound(what);
  const out: DescFile[] = [file];
  const queue = [...file.dependencies];
  const seen = new Set<DescFile>([file]);
  for (let next = queue.shift(); next; next = queue.shift()) {
    if (seen.has(next)) continue;
    seen.add(next);
    if (!sent.has(next)) out.push(next);
    queue.push(...next.dependencies);
  }
  for (const f of out) sent.add(f);
  return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out.map((f) => index.encoded(f)) } };
}

function notFound(what: string): ReflectionAnswer {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } };
}
