import * as assert from "uvu/assert";
import { databaseDestination } from "../../../server/services/interns/shell-egress.js";
import { suite } from "../../support/suite.js";

/** Which host and port of DATABASE_URL the shells' egress rules close (server/services/interns/shell-egress.ts). */
const test = suite("interns: the database the shells' egress rules close");

test("a host name, an address or a bracketed IPv6 address, with the URL's port or PostgreSQL's 5432", () => {
  assert.equal(databaseDestination("postgres://gw:s3cret@db.internal:6543/gateway"), {
    host: "db.internal",
    port: 6543,
  });
  assert.equal(databaseDestination("postgres://gw:s3cret@10.0.0.5/gateway"), { host: "10.0.0.5", port: 5432 });
  assert.equal(databaseDestination("postgresql://gw@[fd00::5]:5433/gateway"), { host: "fd00::5", port: 5433 });
});

test("a host query parameter wins over the URL's host, as for Sequelize", () => {
  assert.equal(databaseDestination("postgres://gw@localhost/gateway?host=10.0.0.7"), { host: "10.0.0.7", port: 5432 });
});

test("a Unix socket (no host, a path, an encoded path) or no URL at all: nothing to close", () => {
  for (const url of [
    "postgres://gw@/gateway?host=/var/run/postgresql",
    "postgresql://%2Fvar%2Frun%2Fpostgresql/gateway",
    "postgres:///gateway",
    "not a url",
  ]) {
    assert.is(databaseDestination(url), undefined, url);
  }
});

test.run();
