import fs from "node:fs/promises";
import type { Logger } from "../logger.js";
import { errorMessage } from "../../../wire/errors.js";

/**
 * The gateway's own files, closed to the machine's other OS users, interns' shell users included
 * (server/services/interns/intern-home.ts). Whatever was wider is narrowed at start and logged.
 */

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
  if ((found & ~wanted) !== 0) log.warn({ dir: dataDir, from: found.toString(8), to: wanted.toString(8) }, "the data directory was open to other users; closed it");
}

/**
 * GATEWAY_CONFIG may hold providers' API keys. Wherever the operator keeps it, it loses what it
 * grants every other user (`o-rwx`; its owner and group keep theirs). A file the gateway cannot
 * change (a read-only mount) is reported instead.
 */
export async function closeConfigFile(file: string | undefined, log: Logger): Promise<void> {
  if (file === undefined) return;
  const { mode } = await fs.stat(file);
  if ((mode & 0o007) === 0) return;
  try {
    await fs.chmod(file, mode & 0o7770);
    log.warn({ file, from: (mode & 0o7777).toString(8), to: (mode & 0o7770).toString(8) }, "GATEWAY_CONFIG was readable by every OS user; closed it to them");
  } catch (err) {
    log.error({ file, err: errorMessage(err) }, "GATEWAY_CONFIG is readable by every OS user, interns' shells included, and could not be changed: make it readable by the gateway's user alone");
  }
}
