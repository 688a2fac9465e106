import { create, createFileRegistry, type DescMessage } from "@bufbuild/protobuf";
import {
  CodeGeneratorResponse_Feature,
  CodeGeneratorResponseSchema,
  FileDescriptorSetSchema,
  type CodeGeneratorRequest,
  type CodeGeneratorResponse,
} from "@bufbuild/protobuf/wkt";
import type { Plugin } from "@bufbuild/protoplugin";
import { allServices } from "../../wire/services.js";
import { openApiDocument } from "./document.js";

/**
 * `protoc-gen-openapi`: the OpenAPI document of the REST facade, written by `buf generate`
 * (buf.gen.yaml, `strategy: all`) to gen/openapi/openapi.json. It documents the services the
 * facade serves (wire/services.ts), in that order, read from the descriptors buf hands over, which
 * carry the protos' comments; services the facade does not serve (gRPC health and reflection) and
 * methods without a `google.api.http` rule get no operation.
 */
export const OPENAPI_FILE = "openapi.json";

export const openApiPlugin: Plugin = {
  name: "protoc-gen-openapi",
  version: "v1",
  run(request: CodeGeneratorRequest): CodeGeneratorResponse {
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: request.protoFile }));
    const services = allServices.map((served) => {
      const service = registry.getService(served.typeName);
      if (!service)
        throw new Error(`${served.typeName} is served by the facade but is not among the protos buf handed over`);
      return service;
    });
    const findMessage = (typeName: string): DescMessage | undefined => registry.getMessage(typeName);
    const document = openApiDocument(services, findMessage);
    return create(CodeGeneratorResponseSchema, {
      supportedFeatures: BigInt(CodeGeneratorResponse_Feature.PROTO3_OPTIONAL),
      file: [{ name: OPENAPI_FILE, content: `${JSON.stringify(document, null, 2)}\n` }],
    });
  },
};
