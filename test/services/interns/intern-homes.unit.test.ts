import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import * as assert from "uvu/assert";
import { loadConfig } from "../../../server/platform/config.js";
import { internHomeDir, moveHomesOutOfDataDir } from "../../../server/services/interns/intern-home.js";
import { captureLogs } from "../../support/log-lines.js";
import { suite } from "../../support/suite.js";

/**
 * Where interns' homes are: GATEWAY_INTERN_HOME_DIR, never inside the data directory (which stays
 * closed to their users), by default beside it; homes an older gateway kept in the data directory
 * are moved there at start, since a restart keeps an intern's files.
 */
const test = suite<{ dir: string }>("interns: where their homes are");

test.before.each(async (context) => {
  context.dir = await fs.mkdtemp(path.join(os.tmpdir(), "intern-homes-"));
});
test.after.each(async ({ dir }) => {
  await fs.rm(dir, { recursive: true, force: true });
});

test("by default beside the data directory; never inside it, nor around it", ({ dir }) => {
  const data = path.join(dir, "data");
  assert.is(internHomeDir(loadConfig({ GATEWAY_DATA_DIR: data }), "abc"), path.join(dir, "data-interns", "abc"));
  assert.is(
    internHomeDir(loadConfig({ GATEWAY_DATA_DIR: data, GATEWAY_INTERN_HOME_DIR: path.join(dir, "homes") }), "abc"),
    path.join(dir, "homes", "abc"),
  );
  for (const inside of [data, path.join(data, "interns"), dir]) {
    assert.throws(
      () => loadConfig({ GATEWAY_DATA_DIR: data, GATEWAY_INTERN_HOME_DIR: inside }),
      /GATEWAY_INTERN_HOME_DIR .* must be outside GATEWAY_DATA_DIR/,
      inside,
    );
  }
});

test(
  "homes in the data directory move out at start, files, modes and all; " +
    "one already in the new place stays where it was, logged",
  async ({ dir }) => {
    const config = loadConfig({ GATEWAY_DATA_DIR: path.join(dir, "data") });
    const legacy = path.join(dir, "data", "interns");
    await fs.mkdir(path.join(legacy, "kept/work"), { recursive: true });
    await fs.writeFile(path.join(legacy, "kept/work/notes.txt"), "the intern's notes", { mode: 0o600 });
    await fs.mkdir(path.join(legacy, "twice/work"), { recursive: true });
    await fs.mkdir(internHomeDir(config, "twice"), { recursive: true });
    const logs = captureLogs();

    await moveHomesOutOfDataDir(config, logs.log);
    assert.is(
      await fs.readFile(path.join(internHomeDir(config, "kept"), "work/notes.txt"), "utf8"),
      "the intern's notes",
    );
    assert.is((await fs.stat(path.join(internHomeDir(config, "kept"), "work/notes.txt"))).mode & 0o777, 0o600);
    assert.equal(await fs.readdir(legacy), ["twice"], "the one in both places is left");
    assert.equal(
      logs.lines.map(({ msg, interns, from }) => ({ msg, interns, from })),
      [
        {
          msg: "an intern's home could not be moved out of the data directory; move it by hand",
          interns: undefined,
          from: path.join(legacy, "twice"),
        },
        { msg: "moved the interns' homes out of the data directory", interns: 1, from: legacy },
      ],
    );

    await fs.rm(path.join(legacy, "twice"), { recursive: true });
    await moveHomesOutOfDataDir(config, logs.log);
    assert.not.ok(
      await fs.access(legacy).then(
        () => true,
        () => false,
      ),
      "the emptied directory goes too",
    );
    assert.is(logs.lines.length, 2, "and a start after that has nothing to do");
  },
);

test.run();
