/**
 * Reading a submitted form (FormData) into the values of a JSON body: text that is empty means
 * "none" (null), a list is written one item per line or separated by commas, a box is on or off.
 */
export function text(fields: FormData, name: string): string {
  return String(fields.get(name) ?? "").trim();
}

export function textOrNull(fields: FormData, name: string): string | null {
  return text(fields, name) || null;
}

/** A number (USD, seconds); null when the field is empty. Anything else is sent as typed, for the API to judge. */
export function numberOrNull(fields: FormData, name: string): number | null {
  const value = text(fields, name);
  return value === "" ? null : Number(value);
}

export function checked(fields: FormData, name: string): boolean {
  return fields.get(name) === "on";
}

/** The values of every checked box named `name`. */
export function checkedValues(fields: FormData, name: string): string[] {
  return fields.getAll(name).map(String);
}

export function listOf(fields: FormData, name: string): string[] {
  return text(fields, name)
    .split(/[\n,]/)
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** How a list reads back in a list field. */
export function listText(values: string[] | null | undefined): string {
  return (values ?? []).join(", ");
}
