import { Sequelize } from "sequelize";
import { SequelizeStorage, Umzug } from "umzug";
import type { Logger } from "../logger.js";
import { migrations } from "./migrations/index.js";
import { initModels } from "./models.js";
import { holdStartUpLock } from "./start-up-locks.js";

export async function openDatabase(url: string, log: Logger): Promise<Sequelize> {
  const sequelize = new Sequelize(url, {
    dialect: "postgres",
    logging: false,
    pool: { max: 20, min: 0, idle: 10_000, acquire: 10_000 },
  });
  await sequelize.authenticate();
  initModels(sequelize);
  await migrate(sequelize, log);
  return sequelize;
}

async function migrate(sequelize: Sequelize, log: Logger): Promise<void> {
  const umzug = new Umzug({
    migrations,
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize, tableName: "schema_migrations" }),
    logger: undefined,
  });
  await sequelize.transaction(async (transaction) => {
    // A second instance waits here while the first one migrates.
    await holdStartUpLock(sequelize, "migrations", transaction);
    const applied = await umzug.up();
    if (applied.length > 0) log.info({ migrations: applied.map((m) => m.name) }, "applied migrations");
  });
}
