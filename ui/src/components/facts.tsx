import type { ComponentChildren } from "preact";

/** One line of a name/value list; `false` leaves it out (a fact the record does not have). */
export type Fact = readonly [name: string, value: ComponentChildren] | false;

/** The details of one record (a batch, a model, a generation, the key's spend) as a name/value list. */
export function Facts({ facts }: { facts: readonly Fact[] }) {
  return (
    <dl class="facts">
      {facts.map((fact) =>
        fact ? (
          <div key={fact[0]}>
            <dt>{fact[0]}</dt>
            <dd>{fact[1]}</dd>
          </div>
        ) : null,
      )}
    </dl>
  );
}
