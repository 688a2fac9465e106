/**
 * Typed reads of a parsed GATEWAY_CONFIG document. Every failure is one plain Error naming the
 * file, the JSON path of the offending value (`models[2].endpoints[0].pricing.prompt`) and the
 * rule it breaks, so an operator can fix the file without reading code. Values are never echoed
 * for fields that may hold secrets (the callers decide what goes into a rule's text).
 */
export class ConfigReader {
  constructor(private readonly source: string) {}

  fail(path: string, rule: string): never {
    throw new Error(`GATEWAY_CONFIG ${this.source}: ${path === "" ? "the document" : path} ${rule}`);
  }

  /** A plain object whose keys are all in `known` (a misspelt key is an error, not a silent default). */
  object(value: unknown, path: string, known: readonly string[]): Record<string, unknown> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) this.fail(path, "must be an object");
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!known.includes(key)) this.fail(child(path, key), `is not a known field (known: ${known.join(", ")})`);
    }
    return record;
  }

  /** A free-form JSON object (e.g. default_parameters), or null. */
  optionalJsonObject(value: unknown, path: string): Record<string, unknown> | null {
    if (value === undefined || value === null) return null;
    if (typeof value !== "object" || Array.isArray(value)) this.fail(path, "must be an object or null");
    return value as Record<string, unknown>;
  }

  list(value: unknown, path: string, options: { optional?: boolean; nonEmpty?: boolean } = {}): unknown[] {
    if (value === undefined && options.optional) return [];
    if (!Array.isArray(value)) this.fail(path, "must be a list");
    if (options.nonEmpty && value.length === 0) this.fail(path, "must list at least one item");
    return value;
  }

  string(value: unknown, path: string, rule?: { pattern: RegExp; description: string }): string {
    if (value === undefined || value === null)
      this.fail(path, rule ? `is required: ${rule.description}` : "is required: a non-empty string");
    if (typeof value !== "string" || value.trim() === "")
      this.fail(path, rule ? `must be ${rule.description}` : "must be a non-empty string");
    if (rule && !rule.pattern.test(value)) this.fail(path, `must be ${rule.description}, got ${JSON.stringify(value)}`);
    return value;
  }

  optionalString(value: unknown, path: string, rule?: { pattern: RegExp; description: string }): string | null {
    return value === undefined || value === null ? null : this.string(value, path, rule);
  }

  stringList(value: unknown, path: string, rule?: { pattern: RegExp; description: string }): string[] {
    return this.list(value, path).map((item, index) => this.string(item, `${path}[${index}]`, rule));
  }

  integer(value: unknown, path: string, min: number, max: number): number {
    if (value === undefined || value === null) this.fail(path, `is required: an integer from ${min} to ${max}`);
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      this.fail(path, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  optionalInteger(value: unknown, path: string, min: number, max: number): number | null {
    return value === undefined || value === null ? null : this.integer(value, path, min, max);
  }

  boolean(value: unknown, path: string, fallback: boolean): boolean {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== "boolean") this.fail(path, `must be true or false, got ${JSON.stringify(value)}`);
    return value;
  }

  oneOf<T extends string>(value: unknown, path: string, options: readonly T[], fallback?: T): T {
    if ((value === undefined || value === null) && fallback !== undefined) return fallback;
    if (typeof value !== "string" || !(options as readonly string[]).includes(value)) {
      this.fail(
        path,
        `must be one of ${options.join(", ")}${value === undefined ? "" : `, got ${JSON.stringify(value)}`}`,
      );
    }
    return value as T;
  }
}

export function child(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

export function item(path: string, index: number): string {
  return `${path}[${index}]`;
}
