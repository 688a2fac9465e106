import type { JsonObject } from "@bufbuild/protobuf";
import { gatewayError } from "../../../wire/errors.js";
import type { ContentFilter } from "./content-filter.js";
import { scanStrings, type ScannedShape, type StringScanner } from "./request-strings.js";
import { normalizedForMatching } from "./text-normalization.js";

export type { ScannedShape } from "./request-strings.js";

/** What the filters found in a body: the filters that matched, and why the call is refused, if it is. */
export interface FilterVerdict {
  matched: ReadonlySet<ContentFilter>;
  blockedBy?: FilterRefusal;
}

/** A refused call: the filter that refuses it and, unless it matched, what it could not filter. */
export interface FilterRefusal {
  filter: ContentFilter;
  /** A block filter met a value it cannot read (token ids, a binary file): 400 naming the field. */
  unreadable?: { field: string; what: string };
  /** A redact filter rewrote two keys of one object into one key: 400 naming the object. */
  collidingKeys?: string;
}

/**
 * Applies content filters to every string a request body sends upstream (request-strings.ts says
 * which), in place, before any provider sees it: redact filters replace each match by their label,
 * flag filters leave the text and are reported, and a block filter that matches stops the walk (the
 * caller refuses the call). Block wins over redact: every text is checked against the block filters
 * on what the client sent. The body belongs to this call (parsed from its request), so rewriting it
 * is safe, and it means nothing later in the call (a stored generation, a log line, the response
 * cache) can hold what was redacted.
 *
 * Each text is matched as sent and in its normal form (text-normalization.ts: NFKC, no format
 * characters, ASCII digits). Redaction works on the text as sent, so the rest of it reaches the
 * provider untouched; only when the normal form of that result still holds a match (an address cut
 * by a zero-width space, a fullwidth number) is the normal form redacted and sent instead.
 */
export function filterRequest(
  filters: readonly ContentFilter[],
  shape: ScannedShape,
  body: JsonObject,
  matched = new Set<ContentFilter>(),
): FilterVerdict {
  try {
    scanStrings(body, shape, new FilterScanner(filters, matched));
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    matched.add(err.refusal.filter);
    return { matched, blockedBy: err.refusal };
  }
  return { matched };
}

/**
 * The refusal of a call: it names the guardrail and the filter (its slug, its label or its place
 * `content_filters[i]`), never the text it matched, nor a custom filter's pattern.
 */
export function blockedError({ filter, unreadable, collidingKeys }: FilterRefusal) {
  const named = `content filter '${filter.name}' of guardrail '${filter.guardrail}'`;
  if (filter.unusable !== undefined) {
    return gatewayError(
      403,
      `Guardrail '${filter.guardrail}' has a content filter this ` +
        `gateway cannot apply (${filter.unusable}); update the guardrail`,
      { reason: "CONTENT_FILTERED" },
    );
  }
  if (unreadable !== undefined) {
    return gatewayError(
      400,
      `${unreadable.field} holds ${unreadable.what}, which ${named} cannot scan, ` +
        "and it blocks what it cannot scan; send the content as text",
      {
        reason: "CONTENT_UNSCANNABLE",
        field: unreadable.field,
      },
    );
  }
  if (collidingKeys !== undefined) {
    return gatewayError(400, `${named} would redact two keys of ${collidingKeys} into the same key; rename them`, {
      reason: "CONTENT_UNSCANNABLE",
      field: collidingKeys,
    });
  }
  return gatewayError(
    403,
    `Request blocked by guardrail '${filter.guardrail}': content filter '${filter.name}' matched the input`,
    { reason: "CONTENT_FILTERED" },
  );
}

/** Ends the walk at the first refusal. */
class Refused {
  constructor(readonly refusal: FilterRefusal) {}
}

class FilterScanner implements StringScanner {
  private readonly blocks: readonly ContentFilter[];
  private readonly flags: readonly ContentFilter[];
  private readonly redacts: readonly ContentFilter[];
  /** The last redact filter that rewrote a key: a collision of keys is its doing. */
  private keyRedactor: ContentFilter | undefined;

  constructor(
    filters: readonly ContentFilter[],
    private readonly matched: Set<ContentFilter>,
  ) {
    this.blocks = filters.filter((filter) => filter.action === "block");
    this.flags = filters.filter((filter) => filter.action === "flag");
    this.redacts = filters.filter((filter) => filter.action === "redact");
  }

  text(value: string): string {
    const normal = normalizedForMatching(value);
    const matches = (filter: ContentFilter) => filter.matches(value) || (normal !== value && filter.matches(normal));
    for (const filter of this.blocks) if (matches(filter)) throw new Refused({ filter });
    for (const filter of this.flags) if (!this.matched.has(filter) && matches(filter)) this.matched.add(filter);
    if (this.redacts.length === 0) return value;
    const redacted = this.redact(value);
    const after = normalizedForMatching(redacted);
    // The raw text hid a match from the patterns: the normal form is what goes upstream.
    if (after !== redacted && this.redacts.some((filter) => filter.matches(after))) return this.redact(normal);
    return redacted;
  }

  key(value: string): string {
    const sent = this.text(value);
    if (sent !== value)
      this.keyRedactor = this.redacts.find((filter) => filter.redact(value) !== value) ?? this.keyRedactor;
    return sent;
  }

  keysCollide(field: string): never {
    throw new Refused({ filter: this.keyRedactor ?? this.redacts[0]!, collidingKeys: field });
  }

  unreadable(field: string, what: string): void {
    const blocking = this.blocks[0];
    if (blocking !== undefined) throw new Refused({ filter: blocking, unreadable: { field, what } });
  }

  private redact(text: string): string {
    let out = text;
    for (const filter of this.redacts) {
      const redacted = filter.redact(out);
      if (redacted !== out) this.matched.add(filter);
      out = redacted;
    }
    return out;
  }
}
