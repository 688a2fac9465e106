import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import * as assert from "uvu/assert";
import { createLocalBlobStore, narrowModes } from "../../../server/platform/storage/local-blob-store.js";
import { closeConfigFile, closeDataDir } from "../../../server/platform/storage/private-paths.js";
import { captureLogs } from "../../support/log-lines.js";
import { suite } from "../../support/suite.js";

/**
 * The gateway's files are its user's alone: what the blob store writes, an older store's tree
 * (narrowed once at start), the data directory and GATEWAY_CONFIG. Other users (interns' shells)
 * are kept out by these modes; test/services/interns/sandbox.test.ts tries to read through them.
 */
const test = suite<{ dir: string }>("storage: private modes");

test.before.each(async (context) => {
  context.dir = await fs.mkdtemp(path.join(os.tmpdir(), "private-modes-"));
});
test.after.each(async ({ dir }) => {
  await fs.rm(dir, { recursive: true, force: true });
});

const modeOf = async (file: string) => (await fs.lstat(file)).mode & 0o777;

test("a put writes its file 0600 and its directories 0700, whatever the process's umask", async ({ dir }) => {
  const root = path.join(dir, "files");
  const previous = process.umask(0);
  try {
    await createLocalBlobStore(root).put("videos/ws/job/0", Readable.from([Buffer.from("bytes")]));
  } finally {
    process.umask(previous);
  }
  for (const sub of ["", "videos", "videos/ws", "videos/ws/job", ".incoming"])
    assert.is(await modeOf(path.join(root, sub)), 0o700, `${sub || "the root"} is 0700`);
  assert.is(await modeOf(path.join(root, "videos/ws/job/0")), 0o600);
});

test(
  "an older tree is narrowed once: wider files and directories, never what a link points at; " +
    "what was narrowed is logged",
  async ({ dir }) => {
    const root = path.join(dir, "files");
    await fs.mkdir(path.join(root, "files/ws"), { recursive: true, mode: 0o755 });
    await fs.chmod(root, 0o755);
    await fs.writeFile(path.join(root, "files/ws/upload"), "upload", { mode: 0o644 });
    await fs.writeFile(path.join(root, "files/ws/narrow"), "already narrower", { mode: 0o400 });
    const outside = path.join(dir, "outside");
    await fs.writeFile(outside, "not the store's", { mode: 0o644 });
    await fs.symlink(outside, path.join(root, "files/ws/link"));
    const logs = captureLogs();

    await narrowModes(root, logs.log);
    assert.is(await modeOf(root), 0o700);
    assert.is(await modeOf(path.join(root, "files")), 0o700);
    assert.is(await modeOf(path.join(root, "files/ws")), 0o700);
    assert.is(await modeOf(path.join(root, "files/ws/upload")), 0o600);
    assert.is(await modeOf(path.join(root, "files/ws/narrow")), 0o400, "narrower modes are kept");
    assert.is(await modeOf(outside), 0o644, "a link is not followed");
    assert.equal(
      logs.lines.filter((line) => line.narrowed !== undefined).map(({ root, narrowed }) => ({ root, narrowed })),
      [{ root, narrowed: 4 }],
    );

    // Once: a later start walks nothing, so a file copied in since is left to the operator.
    await fs.writeFile(path.join(root, "files/ws/later"), "copied in", { mode: 0o644 });
    await narrowModes(root, logs.log);
    assert.is(await modeOf(path.join(root, "files/ws/later")), 0o644);
    assert.is(logs.lines.filter((line) => line.narrowed !== undefined).length, 1);
  },
);

test("a store that does not exist yet: nothing narrowed, nothing logged, no marker", async ({ dir }) => {
  const logs = captureLogs();
  await narrowModes(path.join(dir, "none"), logs.log);
  assert.equal(logs.lines, []);
  assert.not.ok(
    await fs.access(path.join(dir, "none")).then(
      () => true,
      () => false,
    ),
  );
});

test("the data directory is closed to other users (0700), or let through by the database's group alone (0710)", async ({
  dir,
}) => {
  const data = path.join(dir, "data");
  await fs.mkdir(data, { mode: 0o755 });
  await fs.chmod(data, 0o755);
  const logs = captureLogs();
  await closeDataDir(data, logs.log);
  assert.is(await modeOf(data), 0o700);
  assert.equal(
    logs.lines.map(({ from, to }) => ({ from, to })),
    [{ from: "755", to: "700" }],
  );

  const gid = process.getgid?.() ?? 0;
  await closeDataDir(data, logs.log, { gid });
  assert.is(await modeOf(data), 0o710);
  assert.is((await fs.stat(data)).gid, gid);
  assert.is(logs.lines.length, 1, "widening for the database's group is no fix to report");

  const fresh = path.join(dir, "fresh/data");
  await closeDataDir(fresh, logs.log);
  assert.is(await modeOf(fresh), 0o700, "created closed");
});

test("GATEWAY_CONFIG loses what it grants every other user; the owner and group keep theirs", async ({ dir }) => {
  const file = path.join(dir, "gateway.yaml");
  await fs.writeFile(file, "providers: []\n", { mode: 0o644 });
  await fs.chmod(file, 0o644);
  const logs = captureLogs();
  await closeConfigFile(file, logs.log);
  assert.is(await modeOf(file), 0o640);
  assert.equal(
    logs.lines.map(({ file, from, to }) => ({ file, from, to })),
    [{ file, from: "644", to: "640" }],
  );
  await closeConfigFile(file, logs.log);
  await closeConfigFile(undefined, logs.log);
  assert.is(logs.lines.length, 1, "nothing more to do");
});

test.run();
