import * as assert from "uvu/assert";
import { shutdownPhases, type InstanceParts } from "../../server/app/shutdown.js";
import { stopInPhases } from "../../server/platform/lifecycle.js";
import { createLogger } from "../../server/platform/logger.js";
import { suite } from "../support/suite.js";

/**
 * The order an instance stops in (server/app/shutdown.ts), one row per rule it keeps: each row
 * names two parts and says which must have stopped before the other starts. The gateway suites
 * (workers, interns' recovery, settlement durability) show the whole drain on real processes.
 */
const test = suite("shutdown phases");

function partsRecording(events: string[]): InstanceParts {
  const part = (name: string) => ({
    async stop() {
      events.push(name);
    },
  });
  return {
    internSupervisor: { ...part("intern supervisor"), handOver: async () => void events.push("intern hand-over") },
    internHosts: part("intern hosts"),
    shellEgress: part("shell egress"),
    listeners: [part("http listener"), part("grpc listener")],
    workers: [part("batch runner"), part("video poller"), part("cache sweeper")],
    settlement: part("settlement"),
    cacheWrites: part("cache writes"),
    leases: part("leases"),
    notifications: part("notification feed"),
    database: part("database"),
    embeddedDatabase: part("embedded database"),
    tracing: part("tracing"),
  };
}

const ORDER: [before: string, after: string, why: string][] = [
  ["intern supervisor", "intern hosts", "the supervisor must not take over what the hosts release"],
  ["intern hosts", "intern hand-over", "interns are handed over once their hosts are gone"],
  ["intern hosts", "http listener", "the hosts' model calls to this instance end before the listeners drain"],
  ["http listener", "batch runner", "calls in flight end before the workers stop"],
  ["grpc listener", "video poller", "calls in flight end before the workers stop"],
  ["batch runner", "settlement", "the workers' last results are settled"],
  ["settlement", "leases", "every answered call is in the ledger before the leases go back"],
  ["leases", "database", "the leases are returned through the database"],
  ["http listener", "cache writes", "the answers of the calls in flight are stored"],
  ["cache writes", "database", "the cache's writes land before the pool closes"],
  ["notification feed", "database", "the feed's connection closes before the pool"],
  ["database", "embedded database", "the pool closes before its server"],
  ["embedded database", "tracing", "tracing stops last, so every span before it is exported"],
];

test("every part stops once, in an order that keeps each rule", async () => {
  const events: string[] = [];
  await stopInPhases(shutdownPhases(partsRecording(events)), createLogger("silent"));
  assert.is(new Set(events).size, events.length, `each once: ${events.join(", ")}`);
  assert.is(events.length, 16);
  for (const [before, after, why] of ORDER)
    assert.ok(events.indexOf(before) < events.indexOf(after), `${before} before ${after}: ${why}`);
});

test("an instance without an embedded database skips that phase", () => {
  const parts = partsRecording([]);
  delete parts.embeddedDatabase;
  const phase = shutdownPhases(parts).find((p) => p.name === "embedded database");
  assert.equal(phase?.parts, []);
});

test.run();
