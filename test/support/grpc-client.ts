import * as grpc from "@grpc/grpc-js";
import {
  fromBinary,
  toBinary,
  create,
  type DescMessage,
  type DescMethodBiDiStreaming,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type DescService,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { ErrorDetailSchema, type ErrorDetail } from "../../gen/gateway/v1/errors_pb.js";

/**
 * A plain @grpc/grpc-js client for a protobuf-es service descriptor, the way a third-party gRPC
 * client sees the core: no proto-loader, messages serialized with toBinary/fromBinary, errors read
 * from the status code and the `grpc-status-details-bin` trailer.
 */
export interface GrpcClient {
  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    request: MessageInitShape<I>,
    metadata?: Record<string, string>,
  ): Promise<MessageShape<O>>;
  /** A server stream: its messages as they arrive; a failed call throws a GrpcCallError from the iteration. */
  serverStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    request: MessageInitShape<I>,
    metadata?: Record<string, string>,
  ): ServerStream<MessageShape<O>>;
  /** A bidirectional stream that sends every request, half-closes, and collects every answer. */
  bidiStream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodBiDiStreaming<I, O>,
    requests: Array<MessageInitShape<I>>,
    metadata?: Record<string, string>,
  ): Promise<Array<MessageShape<O>>>;
  close(): void;
}

export interface ServerStream<T> {
  messages: AsyncIterable<T>;
  /** Cancels the call (the client went away). */
  cancel(): void;
}

/** A failed call as a gRPC client observes it. */
export class GrpcCallError extends Error {
  constructor(
    readonly code: grpc.status,
    readonly details: string,
    /** The gateway's detail from google.rpc.Status.details, if the trailer carried one. */
    readonly detail: ErrorDetail | undefined,
    /** The type URLs of every detail in the trailer. */
    readonly detailTypes: string[],
  ) {
    super(`gRPC ${grpc.status[code]}: ${details}`);
  }
}

export function createGrpcClient(service: DescService, baseUrl: string): GrpcClient {
  const definition: Record<string, grpc.MethodDefinition<Uint8Array, Uint8Array>> = {};
  for (const method of service.methods) {
    if (method.methodKind !== "unary") continue;
    definition[method.localName] = {
      path: `/${service.typeName}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: Uint8Array) => Buffer.from(value),
      requestDeserialize: (bytes: Buffer) => new Uint8Array(bytes),
      responseSerialize: (value: Uint8Array) => Buffer.from(value),
      responseDeserialize: (bytes: Buffer) => new Uint8Array(bytes),
    };
  }
  const Client = grpc.makeGenericClientConstructor(definition, service.typeName);
  const client = new Client(new URL(baseUrl).host, grpc.credentials.createInsecure());

  return {
    unary(method, request, metadata = {}) {
      const meta = new grpc.Metadata();
      for (const [name, value] of Object.entries(metadata)) meta.set(name, value);
      const bytes = toBinary(method.input, create(method.input, request));
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          `/${method.parent.typeName}/${method.name}`,
          (value: Uint8Array) => Buffer.from(value),
          (value: Buffer) => new Uint8Array(value),
          bytes,
          meta,
          {},
          (err: grpc.ServiceError | null, value?: Uint8Array) => {
            if (err) reject(toCallError(err));
            else if (!value) reject(new Error("no response message"));
            else resolve(fromBinary(method.output, value));
          },
        );
      });
    },
    serverStream(method, request, metadata = {}) {
      const bytes = toBinary(method.input, create(method.input, request));
      const call = client.makeServerStreamRequest(pathOf(method), identity, asBytes, bytes, metadataOf(metadata), {});
      return { messages: decoded(call, method.output), cancel: () => call.cancel() };
    },
    async bidiStream(method, requests, metadata = {}) {
      const call = client.makeBidiStreamRequest(pathOf(method), identity, asBytes, metadataOf(metadata), {});
      for (const request of requests) call.write(toBinary(method.input, create(method.input, request)));
      call.end();
      const answers: Array<MessageShape<typeof method.output>> = [];
      for await (const answer of decoded(call, method.output)) answers.push(answer);
      return answers;
    },
    close: () => client.close(),
  };
}

const pathOf = (method: { name: string; parent: DescService }): string => `/${method.parent.typeName}/${method.name}`;
const identity = (value: Uint8Array): Buffer => Buffer.from(value);
const asBytes = (value: Buffer): Uint8Array => new Uint8Array(value);

function metadataOf(entries: Record<string, string>): grpc.Metadata {
  const meta = new grpc.Metadata();
  for (const [name, value] of Object.entries(entries)) meta.set(name, value);
  return meta;
}

async function* decoded<O extends DescMessage>(
  call: AsyncIterable<unknown>,
  schema: O,
): AsyncGenerator<MessageShape<O>> {
  try {
    for await (const bytes of call) yield fromBinary(schema, bytes as Uint8Array);
  } catch (err) {
    throw isServiceError(err) ? toCallError(err) : err;
  }
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && "code" in err && "metadata" in err;
}

/** Awaits a call that must fail and returns how it failed. */
export async function grpcFailure(call: Promise<unknown>): Promise<GrpcCallError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof GrpcCallError) return err;
    throw err;
  }
  throw new Error("expected the gRPC call to fail, but it succeeded");
}

export const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

function toCallError(err: grpc.ServiceError): GrpcCallError {
  const [raw] = err.metadata?.get("grpc-status-details-bin") ?? [];
  const details = raw instanceof Buffer ? decodeStatusDetails(new Uint8Array(raw)) : [];
  const ours = details.find((any) => any.typeUrl === `type.googleapis.com/${ErrorDetailSchema.typeName}`);
  return new GrpcCallError(
    err.code,
    err.details,
    ours ? fromBinary(ErrorDetailSchema, ours.value) : undefined,
    details.map((any) => any.typeUrl),
  );
}

interface AnyMessage {
  typeUrl: string;
  value: Uint8Array;
}

/** google.rpc.Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; } */
function decodeStatusDetails(bytes: Uint8Array): AnyMessage[] {
  const reader = new BinaryReader(bytes);
  const details: AnyMessage[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 3 && wireType === WireType.LengthDelimited) details.push(decodeAny(reader.bytes()));
    else reader.skip(wireType);
  }
  return details;
}

/** google.protobuf.Any { string type_url = 1; bytes value = 2; } */
function decodeAny(bytes: Uint8Array): AnyMessage {
  const reader = new BinaryReader(bytes);
  const any: AnyMessage = { typeUrl: "", value: new Uint8Array() };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) any.typeUrl = reader.string();
    else if (field === 2 && wireType === WireType.LengthDelimited) any.value = reader.bytes();
    else reader.skip(wireType);
  }
  return any;
}
