import { gatewayError } from "../../../wire/errors.js";
import { isWellFormed } from "../../../wire/text-rules.js";

/**
 * A tracking string is 1 to 512 characters of well-formed Unicode, without NUL and
 * without surrounding whitespace. Lengths are checked by the proto rules; these are the rest.
 */
export function assertTrackingString(user: string): void {
  if (user.includes("\u0000")) throw gatewayError(400, "user must not contain NUL characters");
  if (!isWellFormed(user)) throw gatewayError(400, "user must be well-formed Unicode");
  if (user.trim() !== user) throw gatewayError(400, "user must not begin or end with whitespace");
}

/** `.` and `..` cannot be addressed by path; they are reachable through the list filter only. */
export function assertAddressable(user: string): void {
  if (user === "." || user === "..") {
    throw gatewayError(
      400,
      `The end user '${user}' cannot be addressed by path; ` +
        `look it up with GET /end-users?user=${encodeURIComponent(user)}`,
    );
  }
  assertTrackingString(user);
}
