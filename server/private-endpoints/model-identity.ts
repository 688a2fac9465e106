import { gatewayError } from "../core/errors.js";

/** `author/slug`, e.g. "openai/gpt-4o-2024-08-06" or "meta-llama/llama-3.1-8b-instruct:free". */
const PERMASLUG = /^[a-z0-9][a-z0-9._:-]*\/[a-z0-9][a-z0-9._:-]*$/;

export interface ModelIdentity {
  permaslug: string;
  slug: string;
  name: string;
}

/**
 * The catalog model a private endpoint serves. Until the model catalog exists (a later issue),
 * the identity is derived from the permaslug alone: the slug is the permaslug without a trailing
 * `-YYYY-MM-DD` version date, and the name is the permaslug itself. The catalog will replace this
 * function with a lookup (and a 400 for unknown models).
 */
export function modelIdentity(permaslug: string): ModelIdentity {
  if (!PERMASLUG.test(permaslug)) {
    throw gatewayError(400, "model_permaslug must look like author/slug (lowercase letters, digits, '.', '_', '-', ':')");
  }
  return { permaslug, slug: permaslug.replace(/-\d{4}-\d{2}-\d{2}$/, ""), name: permaslug };
}
