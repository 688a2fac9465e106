import {
  toBinary,
  type DescEnum,
  type DescExtension,
  type DescFile,
  type DescMessage,
  type DescService,
} from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

/**
 * The proto files behind a set of services, as server reflection hands them out: every file that
 * declares a served service and, transitively, every file those import (google/api, the
 * well-known types). protobuf-es embeds each generated file's FileDescriptorProto (`DescFile.proto`),
 * so nothing is read from disk and the answer is exactly what the gateway was built from.
 */
export interface DescriptorIndex {
  /** Fully-qualified names of the served services, in serving order. */
  readonly services: readonly string[];
  fileByName(name: string): DescFile | undefined;
  /** The file declaring a message, enum, service, method or extension, by its fully-qualified name. */
  fileBySymbol(symbol: string): DescFile | undefined;
  /** The file declaring the extension of `extendee` (fully-qualified) with this field number. */
  fileByExtension(extendee: string, number: number): DescFile | undefined;
  /** The field numbers of every known extension of `extendee`; undefined when the type is unknown. */
  extensionNumbers(extendee: string): number[] | undefined;
  /** The serialized google.protobuf.FileDescriptorProto of a file (encoded once, then kept). */
  encoded(file: DescFile): Uint8Array;
}

export function descriptorIndex(services: readonly DescService[]): DescriptorIndex {
  const files = new Map<string, DescFile>();
  const symbols = new Map<string, DescFile>();
  const extensions = new Map<string, Map<number, DescFile>>();
  const encoded = new Map<DescFile, Uint8Array>();

  const addMessage = (message: DescMessage): void => {
    symbols.set(message.typeName, message.file);
    message.nestedMessages.forEach(addMessage);
    message.nestedEnums.forEach(addEnum);
    message.nestedExtensions.forEach(addExtension);
  };
  const addEnum = (desc: DescEnum): void => void symbols.set(desc.typeName, desc.file);
  const addExtension = (extension: DescExtension): void => {
    symbols.set(extension.typeName, extension.file);
    const byNumber = extensions.get(extension.extendee.typeName) ?? new Map<number, DescFile>();
    byNumber.set(extension.number, extension.file);
    extensions.set(extension.extendee.typeName, byNumber);
  };
  const addFile = (file: DescFile): void => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    file.messages.forEach(addMessage);
    file.enums.forEach(addEnum);
    file.extensions.forEach(addExtension);
    for (const service of file.services) {
      symbols.set(service.typeName, file);
      for (const method of service.methods) symbols.set(`${service.typeName}.${method.name}`, file);
    }
    file.dependencies.forEach(addFile);
  };
  for (const service of services) addFile(service.file);

  return {
    services: services.map((service) => service.typeName),
    fileByName: (name) => files.get(name),
    fileBySymbol: (symbol) => symbols.get(symbol),
    fileByExtension: (extendee, number) => extensions.get(extendee)?.get(number),
    extensionNumbers: (extendee) => (symbols.has(extendee) ? [...(extensions.get(extendee)?.keys() ?? [])] : undefined),
    encoded(file) {
      let bytes = encoded.get(file);
      if (!bytes) encoded.set(file, (bytes = toBinary(FileDescriptorProtoSchema, file.proto)));
      return bytes;
    },
  };
}
