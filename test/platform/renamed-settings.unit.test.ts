import { suite } from "../support/suite.js";
import * as assert from "uvu/assert";
import { loadConfig } from "../../server/platform/config.js";

/** Renamed settings: the old name is read, converted to the new unit, and named in a warning; the new name wins. */
const test = suite("foundation: renamed settings");

test("an old name is read in its old unit and warned about", () => {
  const config = loadConfig({ GATEWAY_BATCH_LEASE_SECONDS: "2", GATEWAY_INTERN_RUN_TIMEOUT_S: "90" });
  assert.is(config.batch.leaseSeconds, 2);
  assert.is(config.internRuntime.runTimeoutSeconds, 90);
  assert.equal(config.deprecations, [
    "GATEWAY_INTERN_RUN_TIMEOUT_S is renamed GATEWAY_INTERN_RUN_TIMEOUT_SECONDS; " +
      "the old name is read until the next release",
    "GATEWAY_BATCH_LEASE_SECONDS is renamed GATEWAY_BATCH_LEASE_MS (milliseconds); " +
      "the old name is read until the next release",
  ]);
});

test("the new name wins, in its own unit, without a warning", () => {
  const config = loadConfig({ GATEWAY_VIDEO_LEASE_MS: "1500", GATEWAY_VIDEO_LEASE_SECONDS: "9" });
  assert.is(config.video.leaseSeconds, 1.5);
  assert.equal(config.deprecations, []);
});

test("an old name's value is still checked against the new range", () => {
  assert.throws(
    () => loadConfig({ GATEWAY_BATCH_LEASE_SECONDS: "0" }),
    /GATEWAY_BATCH_LEASE_MS must be an integer from 1000/,
  );
});

test.run();
