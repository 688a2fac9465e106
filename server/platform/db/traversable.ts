import fs from "node:fs/promises";
import path from "node:path";

/**
 * Lets other OS users pass through every directory from `dir` up to the root (search permission
 * only, no listing), for the unprivileged users a root gateway runs its children as: PostgreSQL's
 * cluster directory, an intern shell's working directory.
 */
export async function makeTraversable(dir: string): Promise<void> {
  for (let current = dir; current !== path.dirname(current); current = path.dirname(current)) {
    const { mode } = await fs.stat(current);
    if ((mode & 0o001) === 0) await fs.chmod(current, mode | 0o001);
  }
}
