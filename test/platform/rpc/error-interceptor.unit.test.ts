import * as assert from "uvu/assert";
import { ConnectionAcquireTimeoutError, ConnectionRefusedError, DatabaseError, UniqueConstraintError } from "sequelize";
import { isDatabaseUnavailable } from "../../../server/platform/rpc/error-interceptor.js";
import { suite } from "../../support/suite.js";

/**
 * Which failures the error interceptor answers 503 as a database outage rather than 500. A query on
 * a pooled connection that the server has ended reaches it as a plain Sequelize DatabaseError
 * around pg's error, with whatever pg saw first: the server's goodbye, the closed socket, or the
 * client it had already marked broken. The chat's outage test meets one of them for real.
 */
const test = suite("error interceptor: database outages");

/** A query's error as Sequelize's postgres dialect wraps it. */
function queryError(message: string, code?: string): DatabaseError {
  return new DatabaseError(Object.assign(new Error(message), { sql: "SELECT 1", ...(code ? { code } : {}) }));
}

test("a connection the server ended, seen through the query that ran on it, is an outage", () => {
  const lost = [
    queryError("terminating connection due to administrator command", "57P01"),
    queryError("terminating connection because of crash of another server process", "57P02"),
    queryError("the database system is shutting down", "57P03"),
    queryError("connection failure", "08006"),
    queryError("read ECONNRESET", "ECONNRESET"),
    queryError("write EPIPE", "EPIPE"),
    queryError("Connection terminated unexpectedly"),
    queryError("Connection terminated"),
    queryError("Client has encountered a connection error and is not queryable"),
    queryError("Client was closed and is not queryable"),
  ];
  for (const error of lost) assert.ok(isDatabaseUnavailable(error), error.message);
});

test("no connection to be had is an outage", () => {
  assert.ok(isDatabaseUnavailable(new ConnectionRefusedError(new Error("connect ECONNREFUSED 127.0.0.1:5432"))));
  assert.ok(isDatabaseUnavailable(new ConnectionAcquireTimeoutError(new Error("Operation timeout"))));
});

test("a query the database refused, and errors that are not the database's, are not", () => {
  const others = [
    queryError('relation "missing" does not exist', "42P01"),
    queryError("canceling statement due to statement timeout", "57014"),
    queryError("invalid input syntax for type uuid"),
    new UniqueConstraintError({ message: "Validation error" }),
    Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
    new Error("Connection terminated unexpectedly"),
    "Connection terminated",
  ];
  for (const error of others) assert.not.ok(isDatabaseUnavailable(error), String(error));
});

test.run();
