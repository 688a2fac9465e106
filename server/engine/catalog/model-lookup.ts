import type { Catalog, CatalogModel } from "./catalog.js";

/**
 * `author/slug` in lowercase letters, digits, '.', '_', '-' and ':' (variants such as
 * `meta-llama/llama-3.1-8b-instruct:free`): model ids and canonical slugs alike.
 */
export const MODEL_ID = /^[a-z0-9][a-z0-9._:-]*\/[a-z0-9][a-z0-9._:-]*$/;

const canonicalIndexes = new WeakMap<Catalog, Map<string, CatalogModel>>();

/**
 * A model by its id (`openai/gpt-4o`) or its canonical slug (`openai/gpt-4o-2024-08-06`); the
 * config loader refuses catalogs where one model's canonical slug is another's id, so the answer
 * is unambiguous.
 */
export function findCatalogModel(catalog: Catalog, ref: string): CatalogModel | undefined {
  const byId = catalog.models.get(ref);
  if (byId) return byId;
  let index = canonicalIndexes.get(catalog);
  if (!index) {
    index = new Map([...catalog.models.values()].map((model) => [model.canonicalSlug, model]));
    canonicalIndexes.set(catalog, index);
  }
  return index.get(ref);
}
