/**
 * The protoc plugin that writes the REST API's OpenAPI document (tools/openapi/). Run by
 * `buf generate` (buf.gen.yaml) as `tsx cmd/protoc-gen-openapi.ts`: a code generator request on
 * stdin, the response on stdout.
 *
 * @module
 */
import { runNodeJs } from "@bufbuild/protoplugin";
import { openApiPlugin } from "../tools/openapi/plugin.js";

runNodeJs(openApiPlugin);
