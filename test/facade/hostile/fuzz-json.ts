/**
 * JSON as the hostile-input suites write it: besides what JSON.stringify can write, text it never
 * writes (`1e400`, `-0`, 10,000 levels of nesting), and a seeded random choice so that every run
 * sends the same requests.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

export type FuzzJson = null | boolean | number | string | RawJson | FuzzJson[] | { [key: string]: FuzzJson };
export type FuzzObject = { [key: string]: FuzzJson };

export function jsonText(value: FuzzJson): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([key, v]) => `${JSON.stringify(key)}:${jsonText(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

export function isFuzzObject(value: FuzzJson | undefined): value is FuzzObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof RawJson);
}

/** A copy of `root` with `value` at `path`, objects and arrays made on the way as needed. */
export function withValueAt(root: FuzzObject, path: ReadonlyArray<string | number>, value: FuzzJson): FuzzObject {
  const copy = structuredCopy(root) as FuzzObject;
  let node: FuzzJson = copy;
  for (let i = 0; i < path.length - 1; i++) {
    const step = path[i]!;
    const container = node as { [key: string | number]: FuzzJson };
    const existing = container[step];
    if (existing === undefined || existing === null || typeof existing !== "object" || existing instanceof RawJson) {
      container[step] = typeof path[i + 1] === "number" ? [] : {};
    }
    node = container[step]!;
  }
  (node as { [key: string | number]: FuzzJson })[path.at(-1)!] = value;
  return copy;
}

function structuredCopy(value: FuzzJson): FuzzJson {
  if (value instanceof RawJson || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(structuredCopy);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuredCopy(v)]));
}

/** `levels` nested arrays: deeper than any parser that recurses can follow. */
export const deepArray = (levels: number): RawJson => new RawJson("[".repeat(levels) + "]".repeat(levels));
/** `levels` nested objects under the key `a`. */
export const deepObject = (levels: number): RawJson => new RawJson(`${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`);

/** A small deterministic PRNG (mulberry32): the same seed gives the same cases on every run. */
export class Seeded {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Up to `count` items of `items`, in a seeded order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, count);
  }
  hex(length: number): string {
    let out = "";
    while (out.length < length) out += Math.floor(this.next() * 16).toString(16);
    return out;
  }
  uuid(): string {
    const h = this.hex(32);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}
