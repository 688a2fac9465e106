import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import { ensureOsUser } from "../../../server/platform/db/embedded-postgres.js";
import { reachableBinaries, type Binaries, type Ids } from "../../../server/platform/db/postgres-binaries.js";
import { createLogger } from "../../../server/platform/logger.js";
import { notRoot } from "../../support/required-tools.js";

/**
 * `npm test` as root in a checkout other users cannot enter (under /root): the `postgres` user that
 * runs the embedded server cannot execute the binaries where npm put them. Stand-in binaries in a
 * 0700 directory play the package; the copy goes to a directory of the test's own instead of the
 * shared temp directory. Only root can run PostgreSQL as another user, so only root runs this.
 */
const SUITE = "embedded postgres binaries as root";
const test = suite<{ root: string; cache: string; ids: Ids; bins: Binaries }>(SUITE);
const log = createLogger("silent");
const runs = (bin: string, ids: Ids) => spawnSync(bin, ["--version"], { ...ids, encoding: "utf8" });

if (!notRoot(test, { suite: SUITE, why: "only root can run PostgreSQL as another user" })) {
  test.before(async (ctx) => {
    ctx.ids = ensureOsUser();
    ctx.root = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-closed-"));
    const nativeDir = path.join(ctx.root, "pkg", "native");
    await fs.mkdir(path.join(nativeDir, "bin"), { recursive: true });
    await fs.mkdir(path.join(nativeDir, "lib"));
    await fs.writeFile(path.join(nativeDir, "lib", "libfake.so.1"), "library");
    await fs.symlink("libfake.so.1", path.join(nativeDir, "lib", "libfake.so"));
    // Like the real initdb, it needs its library directory to answer.
    const script = '#!/bin/sh\ncat "$(dirname "$0")/../lib/libfake.so" > /dev/null && echo "initdb (PostgreSQL) 18"\n';
    for (const name of ["initdb", "postgres"])
      await fs.writeFile(path.join(nativeDir, "bin", name), script, { mode: 0o700 });
    await fs.writeFile(
      path.join(ctx.root, "pkg", "package.json"),
      JSON.stringify({ version: `0.0.0-test.${randomBytes(4).toString("hex")}` }),
    );
    await fs.chmod(ctx.root, 0o700);
    ctx.bins = { initdb: path.join(nativeDir, "bin", "initdb"), postgres: path.join(nativeDir, "bin", "postgres") };
    ctx.cache = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-cache-"));
    await fs.chmod(ctx.cache, 0o755);
  });
  test.after(async (ctx) => {
    await fs.rm(ctx.root, { recursive: true, force: true });
    await fs.rm(ctx.cache, { recursive: true, force: true });
  });

  test("binaries the postgres user cannot reach are copied once where it can, and run from there", async ({
    ids,
    bins,
    cache,
  }) => {
    assert.is(
      (runs(bins.initdb, ids).error as NodeJS.ErrnoException | undefined)?.code,
      "EACCES",
      "the situation of a clone under /root",
    );
    const reachable = await reachableBinaries(bins, ids, log, cache);
    assert.ok(reachable.initdb.startsWith(cache + path.sep), reachable.initdb);
    assert.match(runs(reachable.initdb, ids).stdout, /PostgreSQL/);
    assert.match(runs(reachable.postgres, ids).stdout, /PostgreSQL/);
    const copy = path.dirname(path.dirname(path.dirname(reachable.initdb)));
    const { mode, uid } = await fs.stat(copy);
    assert.is(uid, 0);
    assert.is(mode & 0o777, 0o755);
    assert.is(await fs.readlink(path.join(copy, "native", "lib", "libfake.so")), "libfake.so.1", "links stay links");

    const marker = await fs.stat(path.join(copy, ".complete"));
    const again = await reachableBinaries(bins, ids, log, cache);
    assert.equal(again, reachable);
    assert.is((await fs.stat(path.join(copy, ".complete"))).mtimeMs, marker.mtimeMs, "copied once, reused after");
    assert.equal(
      (await fs.readdir(cache)).filter((name) => name.includes("staging")),
      [],
      "no staging left behind",
    );
  });

  test("binaries it can reach are used where they are", async ({ ids, bins, cache }) => {
    const reachable = await reachableBinaries(bins, ids, log, cache);
    const elsewhere = await fs.mkdtemp(path.join(os.tmpdir(), "gateway-cache-"));
    try {
      assert.equal(await reachableBinaries(reachable, ids, log, elsewhere), reachable);
      assert.equal(await fs.readdir(elsewhere), [], "nothing copied");
    } finally {
      await fs.rm(elsewhere, { recursive: true, force: true });
    }
  });

  test("a copy someone else could have planted is refused with what to do", async ({ ids, bins, cache }) => {
    const copy = path.dirname(path.dirname(path.dirname((await reachableBinaries(bins, ids, log, cache)).initdb)));
    await fs.rm(copy, { recursive: true });
    await fs.mkdir(copy);
    await fs.chmod(copy, 0o777);
    const err = await reachableBinaries(bins, ids, log, cache).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(err, "refused");
    assert.match(err.message, /cannot be run by the system user postgres/);
    assert.match(err.message, /not a directory that only this user can write/);
    assert.match(err.message, /Move the checkout to a directory other users can enter, or set DATABASE_URL/);
  });
}

test.run();
