import type { Sequelize } from "sequelize";
import type { Catalog } from "./catalog.js";
import { writeCatalog } from "./catalog-store.js";

/**
 * Writes the configured catalog into Postgres, in one transaction: providers (never their API
 * keys), models and endpoints are upserted; rows the config no longer declares stay (the ledger
 * and analytics keep referring to them) with `listed = false`.
 *
 * A model without a configured `created` keeps the time its row was first written, so the value
 * is the same across restarts and across instances sharing the database; the in-memory catalog
 * gets that value here (it holds 0 until then).
 */
export async function syncCatalog(sequelize: Sequelize, catalog: Catalog): Promise<void> {
  const created = await writeCatalog(sequelize, catalog);
  for (const model of catalog.models.values()) if (model.created <= 0) model.created = created.get(model.id) ?? 0;
}
