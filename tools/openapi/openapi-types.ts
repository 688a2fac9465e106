/**
 * The parts of an OpenAPI 3.1 document this generator writes, typed so that a misspelt keyword is
 * a compile error. Schemas are JSON Schema 2020-12, OpenAPI 3.1's dialect.
 */
export type JsonType = "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";

export interface JsonSchema {
  $ref?: string;
  type?: JsonType | JsonType[];
  format?: string;
  title?: string;
  description?: string;
  enum?: Array<string | null>;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  contentEncoding?: string;
  contentMediaType?: string;
}

export interface MediaType {
  schema: JsonSchema;
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  description?: string;
  schema: JsonSchema;
  style?: "form";
  explode?: boolean;
}

export interface RequestBody {
  description?: string;
  required: boolean;
  content: Record<string, MediaType>;
}

/** A pointer to a component of the document. */
export interface Reference {
  $ref: string;
}

/** A response header (its name is the key of `Response.headers`). */
export interface Header {
  description: string;
  schema: JsonSchema;
}

export interface Response {
  description: string;
  headers?: Record<string, Header | Reference>;
  content?: Record<string, MediaType>;
}

export type ResponseOrRef = Response | { $ref: string };

export type SecurityRequirement = Record<string, string[]>;

export interface Operation {
  operationId: string;
  tags: string[];
  summary?: string;
  description?: string;
  security?: SecurityRequirement[];
  parameters?: Array<Parameter | Reference>;
  requestBody?: RequestBody;
  responses: Record<string, ResponseOrRef>;
}

export type HttpVerb = "get" | "put" | "post" | "delete" | "patch" | "head" | "options" | "trace";

export type PathItem = Partial<Record<HttpVerb, Operation>>;

export interface Tag {
  name: string;
  description?: string;
}

export interface SecurityScheme {
  type: "http";
  scheme: "bearer";
  description: string;
}

export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  tags: Tag[];
  security: SecurityRequirement[];
  paths: Record<string, PathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, Response>;
    parameters: Record<string, Parameter>;
    headers: Record<string, Header>;
    securitySchemes: Record<string, SecurityScheme>;
  };
}
