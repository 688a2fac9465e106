/**
 * The strict timestamp form of the authorization-code expiry: UTC with seconds,
 * optional fraction. Offsets and minute precision are refused rather than guessed at, and the
 * calendar is checked because Date.parse rolls 2030-02-30 over into March.
 *
 * @module
 */
import { gatewayError } from "../../../wire/errors.js";

const FORM = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?Z$/;

export function parseUtcSeconds(text: string, field: string): Date {
  const match = FORM.exec(text);
  const invalid = () =>
    gatewayError(400, `${field} must be an ISO 8601 UTC timestamp with seconds, such as 2030-12-31T23:59:59Z`);
  if (!match) throw invalid();
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = match[7] ? Math.floor(Number(`0.${match[7]}`) * 1000) : 0;
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  const sameFields =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  if (!sameFields) throw invalid();
  return date;
}
