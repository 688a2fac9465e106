import fs from "node:fs/promises";
import path from "node:path";
import { parse as parseYaml } from "yaml";
import type { Catalog } from "./catalog.js";
import { catalogFromDocument } from "./catalog-document.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * GATEWAY_CONFIG: the JSON file (YAML when it ends in .yaml or .yml) declaring the providers the
 * gateway calls, the models it offers with their endpoints, and regional hostnames. Without a
 * file the catalog is empty. Any mistake stops the start with one message naming the file, the
 * JSON path and the rule. Keys are snake_case; unknown keys are refused.
 *
 *   providers[]            slug            lowercase [a-z0-9-], unique; endpoints refer to it
 *                          name            display name (default: slug)
 *                          kind            openai | anthropic (the wire format spoken)
 *                          base_url        http(s) URL, e.g. https://api.openai.com/v1
 *                          api_key         string; ${VAR} is replaced from the environment ("" = none)
 *                          timeout_ms      time allowed until response headers (default 60000)
 *                          native_batches  run batches routed here through the provider's own batch
 *                                          API (Anthropic message batches, OpenAI file batches)
 *                                          instead of item by item (default false)
 *                          region          global | europe | us: default of its endpoints (global)
 *                          zdr             zero data retention: default of its endpoints (false)
 *                          data_collection allow | deny: default of its endpoints (deny)
 *   models[]               id              author/slug, lowercase, unique
 *                          canonical_slug  permanent slug, e.g. openai/gpt-4o-2024-08-06 (default: id)
 *                          name            display name (required)
 *                          description     (default "")
 *                          created         ISO date or Unix seconds (default: when this gateway's
 *                                          database first saw the model)
 *                          context_length  tokens (required); endpoints inherit it
 *                          input_modalities   text, image, file, audio, video (default [text])
 *                          output_modalities  text, image, embeddings, audio, video, rerank, decisions,
 *                                             speech, transcription (default [text])
 *                          tokenizer       (default "Other"); instruct_type, supported_voices,
 *                          default_parameters, per_request_limits, expiration_date (YYYY-MM-DD),
 *                          knowledge_cutoff (all default null); is_moderated (default false)
 *                          endpoints[]     at least one:
 *     provider                 a declared provider slug
 *     upstream_model_id        the provider's own model name
 *     pricing                  {prompt, completion} required, {image, request} default "0": USD per
 *                              token / image / request as decimal strings, at most 12 decimals;
 *                              {input_cache_read, input_cache_write} optional: USD per prompt token
 *                              read from / written to the provider's prompt cache (absent: `prompt`)
 *     tag                      distinguishes two endpoints of one provider (default: provider slug)
 *     context_length           (default: the model's); max_completion_tokens, max_prompt_tokens,
 *     quantization             (default null)
 *     supported_parameters     (default: what the provider kind's API accepts)
 *     supports_implicit_caching (default false)
 *     region, zdr, data_collection (default: the provider's)
 *   regional_hosts         {host: region}: requests arriving on that hostname stay in the region
 *   video_models[]         video generation models (schema: video-models.ts)
 *
 * An endpoint's id is `<model id>@<provider slug>`, plus `/<tag>` when the tag is not the slug.
 */
export async function loadCatalogFile(
  file: string | undefined,
  env: Record<string, string | undefined>,
): Promise<Catalog> {
  if (file === undefined) return catalogFromDocument(null, "", env);
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (err) {
    throw new Error(
      `GATEWAY_CONFIG ${file}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    );
  }
  return catalogFromDocument(parseDocument(file, text), file, env);
}

function parseDocument(file: string, text: string): unknown {
  const yaml = [".yaml", ".yml"].includes(path.extname(file).toLowerCase());
  try {
    return yaml ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    // Parser messages may quote the offending text, which could hold a key: keep only the position.
    const message = errorMessage(err)
      .split("\n")[0]!
      .replace(/,? ".*" is not valid JSON/, "");
    throw new Error(`GATEWAY_CONFIG ${file}: not valid ${yaml ? "YAML" : "JSON"}: ${message}`);
  }
}
