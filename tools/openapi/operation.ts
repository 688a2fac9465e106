import type { DescMethod } from "@bufbuild/protobuf";
import { Access, access, Entitlement, entitlement, global_host_only } from "../../gen/gateway/v1/options_pb.js";
import type { Route } from "../../facade/route-table.js";
import { optionOf } from "../../wire/proto-options.js";
import { commentOf, summaryOf } from "./comments.js";
import { headerParameters } from "./headers.js";
import type { Operation } from "./openapi-types.js";
import { pathParameters, queryParameters } from "./parameters.js";
import { requestBodyOf, type FindMessage } from "./request-body.js";
import { responsesOf } from "./responses.js";
import type { MessageSchemas } from "./schemas.js";

/**
 * One REST binding of an RPC as an OpenAPI operation: documented by the method's comment and its
 * access options (what the core's auth interceptor enforces), tagged with its service. Public
 * methods (`ACCESS_PUBLIC`) need no key: `security: []`; every other one takes the document's
 * bearer scheme.
 */
export function operationOf(
  route: Route,
  operationId: string,
  schemas: MessageSchemas,
  findMessage: FindMessage,
): Operation {
  const { method } = route;
  const comment = commentOf(method);
  // Without a comment the method's name says it: `GetKey` → "Get key".
  const summary = comment === undefined ? spaced(method.name) : summaryOf(comment);
  // The comment in full only when it says more than its first sentence.
  const description = [comment === summary ? undefined : comment, ...accessNotes(method)]
    .filter((text) => text !== undefined)
    .join("\n\n");
  const parameters = [
    ...pathParameters(route, schemas),
    ...queryParameters(route, schemas),
    ...headerParameters(route),
  ];
  const requestBody = requestBodyOf(route, schemas, findMessage);
  return {
    operationId,
    tags: [method.parent.name],
    summary,
    ...(description === "" ? {} : { description }),
    ...(optionOf(method, access) === Access.PUBLIC ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(route, schemas, findMessage),
  };
}

function spaced(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Who may call the method beyond "any valid key", from the options the core enforces. */
function accessNotes(method: DescMethod): string[] {
  const notes: string[] = [];
  if (optionOf(method, access) === Access.PUBLIC) notes.push("No API key needed; a key that is sent must be valid.");
  if (optionOf(method, access) === Access.MANAGEMENT) notes.push("Management keys only; other keys get 403.");
  const needs = optionOf(method, entitlement);
  if (needs === Entitlement.INTERNS) notes.push("Organizations in the interns programme only; others get 404.");
  if (needs === Entitlement.PRIVATE_ENDPOINTS)
    notes.push("Organizations with the private endpoints entitlement only; others get 403.");
  if (optionOf(method, global_host_only))
    notes.push("Served on the global hostname only; a regional hostname gets 403.");
  return notes;
}
