import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/** Nullable timestamp columns become unset Timestamp fields (rendered `null` where nullable). */
export function optionalTimestamp(date: Date | null | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}
