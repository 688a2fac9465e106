import fs from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import type { HttpVerb, OpenApiDocument, Operation, Response } from "../../tools/openapi/openapi-types.js";

/**
 * The generated OpenAPI document (gen/openapi/openapi.json) and validators of real bodies against
 * its schemas, with ajv's JSON Schema 2020-12 dialect (OpenAPI 3.1's). Schemas are compiled by
 * JSON pointer into the document, so their `$ref`s resolve as in the document itself.
 */
export const OPENAPI_FILE = new URL("../../gen/openapi/openapi.json", import.meta.url);

export function openApiText(): string {
  return fs.readFileSync(OPENAPI_FILE, "utf8");
}

export function openApiDocument(): OpenApiDocument {
  return JSON.parse(openApiText()) as OpenApiDocument;
}

const DOCUMENT_ID = "https://model-gateway.test/openapi.json";

/** The formats the document uses; the numeric and binary ones are annotations only. */
const FORMATS: Record<string, RegExp | true> = {
  "date-time": /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  int32: true,
  int64: true,
  float: true,
  double: true,
  binary: true,
};

export interface BodyValidator {
  /** The schema errors of a response body (empty: valid). `status` falls back to the 4XX/5XX entry. */
  response(verb: string, path: string, status: number, body: unknown, contentType?: string): string[];
  /** The names of the headers the document lists for an answer (`status` falls back to the 4XX/5XX entry). */
  responseHeaders(verb: string, path: string, status: number): string[];
  /** The schema errors of a request body. */
  request(verb: string, path: string, body: unknown, contentType?: string): string[];
  operation(verb: string, path: string): Operation;
}

export function bodyValidator(document: OpenApiDocument = openApiDocument()): BodyValidator {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const compiled = new Map<string, ValidateFunction>();
  const check = (pointer: string[], body: unknown): string[] => {
    const ref = `${DOCUMENT_ID}#/${pointer.map(token).join("/")}`;
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: ref })));
    return validate(body)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`);
  };
  const operation = (verb: string, path: string): Operation => {
    const found = document.paths[path]?.[verb.toLowerCase() as HttpVerb];
    if (!found) throw new Error(`the document has no operation ${verb} ${path}`);
    return found;
  };
  /** The answer documented for `status`, and where it is in the document. */
  const answer = (verb: string, path: string, status: number): { entry: Response; base: string[] } => {
    const { responses } = operation(verb, path);
    const key = String(status) in responses ? String(status) : `${String(status)[0]}XX`;
    const entry = responses[key];
    if (!entry) throw new Error(`${verb} ${path} documents no ${status} answer`);
    // The error answers refer to the shared response component.
    if (!("$ref" in entry)) return { entry, base: ["paths", path, verb.toLowerCase(), "responses", key] };
    const name = entry.$ref.replace("#/components/responses/", "");
    const shared = document.components.responses[name];
    if (!shared) throw new Error(`${entry.$ref} is not in the document`);
    return { entry: shared, base: ["components", "responses", name] };
  };
  return {
    operation,
    response(verb, path, status, body, contentType = "application/json") {
      return check([...answer(verb, path, status).base, "content", contentType, "schema"], body);
    },
    responseHeaders(verb, path, status) {
      return Object.keys(answer(verb, path, status).entry.headers ?? {});
    },
    request(verb, path, body, contentType = "application/json") {
      return check(["paths", path, verb.toLowerCase(), "requestBody", "content", contentType, "schema"], body);
    },
  };
}

/** One JSON pointer token (RFC 6901), percent-encoded for a URI fragment. */
function token(text: string): string {
  return encodeURIComponent(text.replace(/~/g, "~0").replace(/\//g, "~1"));
}
