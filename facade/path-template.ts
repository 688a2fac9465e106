/**
 * The subset of google.api.http path templates the API uses: literal segments and single-segment
 * variables `{field}` / `{field.sub}` / `{field=*}`. Anything else is refused at start-up, so a
 * proto change cannot silently produce a route the facade would serve wrongly.
 *
 * @module
 */

export type Segment = { kind: "literal"; value: string } | { kind: "variable"; field: string[] };

const LITERAL = /^[A-Za-z0-9._~-]+$/;
const VARIABLE = /^\{([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)(?:=\*)?\}$/;

export function parseTemplate(template: string): Segment[] {
  if (!template.startsWith("/")) throw new Error(`path template must start with '/': ${template}`);
  return template
    .slice(1)
    .split("/")
    .map((part) => {
      if (LITERAL.test(part)) return { kind: "literal", value: part };
      const variable = VARIABLE.exec(part);
      if (variable?.[1]) return { kind: "variable", field: variable[1].split(".") };
      throw new Error(`unsupported path template segment '${part}' in ${template}`);
    });
}

/**
 * Splits a raw request path into decoded segments. Splitting happens before percent-decoding, so
 * an encoded slash (%2F) stays inside its segment: `/end-users/a%2Fb` addresses the user "a/b". A
 * segment with a malformed escape stays as it was sent and the path is marked `malformed`: the
 * route can still be matched and the caller authenticated before the path is refused.
 */
export function splitPath(rawPath: string): { segments: string[]; malformed: boolean } {
  let malformed = false;
  const segments = rawPath
    .slice(1)
    .split("/")
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        malformed = true;
        return part;
      }
    });
  return { segments, malformed };
}
