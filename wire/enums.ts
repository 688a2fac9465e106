/**
 * Proto enums travel as the API's lowercase strings on the REST wire and in the database; each
 * enum value names its string with the `(gateway.v1.wire)` option. The zero value has none.
 *
 * @module
 */
import { getOption, type DescEnum } from "@bufbuild/protobuf";
import { wire } from "../gen/gateway/v1/options_pb.js";

interface WireTable {
  byNumber: Map<number, string>;
  byWire: Map<string, number>;
}

const tables = new WeakMap<DescEnum, WireTable>();

function tableOf(desc: DescEnum): WireTable {
  let table = tables.get(desc);
  if (!table) {
    table = { byNumber: new Map(), byWire: new Map() };
    for (const value of desc.values) {
      const name = getOption(value, wire);
      if (name === "") continue;
      table.byNumber.set(value.number, name);
      table.byWire.set(name, value.number);
    }
    tables.set(desc, table);
  }
  return table;
}

/** The wire string of an enum value; undefined for the zero ("not set") value. */
export function wireName(desc: DescEnum, value: number): string | undefined {
  return tableOf(desc).byNumber.get(value);
}

/**
 * The wire strings of a repeated enum field of a request. The validation interceptor has already
 * refused unknown and zero items, so every item has a name.
 */
export function wireNamesOf(desc: DescEnum, values: readonly number[]): string[] {
  return values.map((value) => wireName(desc, value) ?? String(value));
}

export function enumFromWire(desc: DescEnum, name: string): number | undefined {
  return tableOf(desc).byWire.get(name);
}

export function wireNames(desc: DescEnum): string[] {
  return [...tableOf(desc).byWire.keys()];
}

/** Reads a wire string stored in the database back into the enum; unknown or null → 0. */
export function enumFromStored(desc: DescEnum, stored: string | null | undefined): number {
  return stored ? (enumFromWire(desc, stored) ?? 0) : 0;
}
