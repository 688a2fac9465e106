import type { Sequelize, Transaction } from "sequelize";

/**
 * The start-up steps that instances sharing a database take in turn, each under its own advisory
 * lock. The keys are constants shared by every instance, listed together so that no two collide.
 */
const START_UP_LOCKS = {
  migrations: 727_001,
  bootstrap: 727_002,
  catalogSync: 727_003,
} as const;

/**
 * Holds the step's lock until `transaction` ends (or its connection dies): another instance taking
 * the same step waits here until this one is done.
 */
export async function holdStartUpLock(
  sequelize: Sequelize,
  step: keyof typeof START_UP_LOCKS,
  transaction: Transaction,
): Promise<void> {
  await sequelize.query("SELECT pg_advisory_xact_lock(:lock)", {
    replacements: { lock: START_UP_LOCKS[step] },
    transaction,
  });
}
