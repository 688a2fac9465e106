/**
 * How a setting is read from the environment: the value rules every part of the configuration
 * shares (server/platform/config.ts and the config-*.ts files beside it), with the error messages
 * that stop a start on a bad value.
 *
 * @module
 */

export type Env = Record<string, string | undefined>;

/**
 * Settings renamed when the names were settled: one spelling per unit (`_MS`,
 * `_SECONDS`) and every lease in milliseconds. An old name is still read for one release, with a
 * warning at start (`deprecations`); the new name wins when both are set.
 */
export const RENAMED = {
  GATEWAY_INTERN_INTERACTION_TIMEOUT_SECONDS: { old: "GATEWAY_INTERN_INTERACTION_TIMEOUT_S", factor: 1 },
  GATEWAY_INTERN_RUN_TIMEOUT_SECONDS: { old: "GATEWAY_INTERN_RUN_TIMEOUT_S", factor: 1 },
  GATEWAY_BATCH_LEASE_MS: { old: "GATEWAY_BATCH_LEASE_SECONDS", factor: 1000 },
  GATEWAY_VIDEO_LEASE_MS: { old: "GATEWAY_VIDEO_LEASE_SECONDS", factor: 1000 },
} as const;

/** A renamed setting's value: its new name, else its old one converted to the new unit. */
export type RenamedVar = (name: keyof typeof RENAMED, fallback: number, min: number, max: number) => number;

/** Reads renamed settings, noting in `deprecations` each old name still in use. */
export function renamedVars(env: Env, deprecations: string[]): RenamedVar {
  return (name, fallback, min, max) => {
    const { old, factor } = RENAMED[name];
    if (nonEmpty(env[name]) !== undefined || nonEmpty(env[old]) === undefined)
      return intVar(env, name, fallback, min, max);
    deprecations.push(
      `${old} is renamed ${name}${factor === 1 ? "" : ` (milliseconds)`}; the old name is read until the next release`,
    );
    return intVar(
      { [name]: String(intVar(env, old, fallback / factor, 0, Number.MAX_SAFE_INTEGER) * factor) },
      name,
      fallback,
      min,
      max,
    );
  };
}

export function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name])?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

/** A comma-separated list, lower-cased, without empty items. */
export function listVar(env: Env, name: string): string[] {
  return (env[name] ?? "")
    .split(",")
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== "");
}

/** `host=address,…` pairs, hostnames lower-cased. */
export function resolveVar(env: Env, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of listVar(env, name)) {
    const [host, address, extra] = item.split("=").map((part) => part.trim());
    if (!host || !address || extra !== undefined)
      throw new Error(`${name} must be a list of host=address pairs, got "${item}"`);
    out[host] = address;
  }
  return out;
}

export function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}
