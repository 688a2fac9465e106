import type { Catalog } from "../../engine/catalog/catalog.js";
import { MODEL_ID, findCatalogModel } from "../../engine/index.js";
import { gatewayError } from "../../../wire/errors.js";

export interface ModelIdentity {
  /** The model's canonical slug, e.g. "openai/gpt-4o-2024-08-06". */
  permaslug: string;
  /** The catalog model id, e.g. "openai/gpt-4o". */
  slug: string;
  name: string;
}

/**
 * The catalog model a private endpoint serves, named by its id or its canonical slug. A private
 * endpoint adds a deployment to a model the gateway offers; it cannot invent a model.
 */
export function modelIdentity(catalog: Catalog, permaslug: string): ModelIdentity {
  if (!MODEL_ID.test(permaslug)) {
    throw gatewayError(
      400,
      "model_permaslug must look like author/slug (lowercase letters, digits, '.', '_', '-', ':')",
    );
  }
  const model = findCatalogModel(catalog, permaslug);
  if (!model)
    throw gatewayError(
      400,
      `model_permaslug '${permaslug}' is not a model of this gateway's catalog (GET /api/v1/models lists them)`,
    );
  return { permaslug: model.canonicalSlug, slug: model.id, name: model.name };
}
