import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { gatewayError } from "../../../wire/errors.js";

/** Nullable timestamp columns become unset Timestamp fields (rendered `null` where nullable). */
export function optionalTimestamp(date: Date | null | undefined): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}

/** The range of an RFC 3339 time (years 1 to 9999), which is also what Postgres accepts from us. */
const MIN_SECONDS = -62_135_596_800n;
const MAX_SECONDS = 253_402_300_799n;

/**
 * A request's Timestamp as a Date, or a 400 naming `field`. The REST decoder admits only RFC 3339
 * text, but a binary client can send any seconds and nanos, and a time Postgres cannot take would
 * be a 500.
 */
export function requestDate(timestamp: Timestamp, field: string): Date {
  const { seconds, nanos } = timestamp;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || nanos < 0 || nanos > 999_999_999) {
    throw gatewayError(400, `${field} must be a time from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z`, { field });
  }
  return timestampDate(timestamp);
}
