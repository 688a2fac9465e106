/**
 * The gateway's own files, closed to the machine's other OS users, interns' shell users included
 * (server/services/interns/intern-home.ts). Whatever was wider is narrowed at start and logged.
 *
 * @module
 */
import fs from "node:fs/promises";
import type { Logger } from "../logger.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * The data directory (GATEWAY_DATA_DIR) holds the master key, the operator token, the embedded
 * cluster and its password, and by default the stored files: 0700. A root gateway's embedded
 * PostgreSQL runs as the user `postgres`, which must pass through it to its cluster: then it is
 * 0710 with that user's group (`passFor`), which lets postgres through and nobody else.
 */
export async function closeDataDir(dataDir: string, log: Logger, passFor?: { gid: number }): Promise<void> {
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const wanted = passFor ? 0o710 : 0o700;
  const { mode, uid, gid } = await fs.stat(dataDir);
  if (passFor && gid !== passFor.gid) await fs.chown(dataDir, uid, passFor.gid);
  const found = mode & 0o7777;
  if (found === wanted) return;
  await fs.chmod(dataDir, wanted);
  if ((found & ~wanted) !== 0)
    log.warn(
      { dir: dataDir, from: found.toString(8), to: wanted.toString(8) },
      "the data directory was open to other users; closed it",
    );
}

/**
 * GATEWAY_CONFIG may hold providers' API keys. Wherever the operator keeps it, it loses what it
 * grants every other user (`o-rwx`; its owner and group keep theirs). A file the gateway cannot
 * change (a read-only mount) is reported instead.
 */
export async function closeConfigFile(file: string | undefined, log: Logger): Promise<void> {
  if (file === undefined) return;
  const failure = await closeToOthers(file, "GATEWAY_CONFIG", log);
  if (failure !== undefined) {
    log.error(
      { file, err: failure },
      "GATEWAY_CONFIG is readable by every OS user, interns' shells included, " +
        "and could not be changed: make it readable by the gateway's user alone",
    );
  }
}

/**
 * A key file that GATEWAY_CONFIG names (a Google service account's `google_service_account`) is
 * a private key and nothing else: it is narrowed like GATEWAY_CONFIG, and a gateway that cannot
 * narrow it does not start, since every OS user (interns' shells included) could sign as that
 * account. `what` names it in the log and the refusal.
 */
export async function closeKeyFile(file: string, what: string, log: Logger): Promise<void> {
  const failure = await closeToOthers(file, what, log);
  if (failure !== undefined) {
    throw new Error(
      `${what} ${file} is readable by every OS user, interns' shells included, ` +
        `and its mode could not be narrowed (${failure}): make it readable by the gateway's user alone (0600 or 0640)`,
    );
  }
}

/** Removes what `file` grants every other user, logging the change; answers why it could not. */
async function closeToOthers(file: string, what: string, log: Logger): Promise<string | undefined> {
  const { mode } = await fs.stat(file);
  if ((mode & 0o007) === 0) return undefined;
  try {
    await fs.chmod(file, mode & 0o7770);
  } catch (err) {
    return errorMessage(err);
  }
  log.warn(
    { file, from: (mode & 0o7777).toString(8), to: (mode & 0o7770).toString(8) },
    `${what} was readable by every OS user; closed it to them`,
  );
  return undefined;
}
