import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import * as assert from "uvu/assert";
import { outputKey } from "../../../server/services/videos/video-outputs.js";
import { eventually } from "../../support/eventually.js";
import { uploadFile } from "../../support/file-uploads.js";
import { at, call } from "../../support/http.js";
import { processesOf, runningInternId, runtimeSuite, shellResults } from "../../support/intern-runtime.js";
import { notRoot } from "../../support/required-tools.js";

/** Far above what a command here takes on a loaded machine; the fork bomb runs until it. */
const SHELL_TIMEOUT_MS = 5_000;
const MAX_PROCESSES = 32;
const MAX_FILE_MIB = 4;
const MAX_MEMORY_MIB = 768;

/**
 * The operator's files directory, outside the data directory and open to passers-by as
 * directories are by default: only the stored files' own modes keep them private.
 */
const filesDir = mkdtempSync(path.join(os.tmpdir(), "sandbox-files-"));
chmodSync(filesDir, 0o755);

/**
 * What an intern's shell can reach on the gateway's machine: none of the tenants' files, none of
 * the gateway's, nothing of another intern; and how far its commands can go (processes, file
 * size, memory, CPU time).
 */
const test = runtimeSuite("interns: what a shell can reach", {
  settings: {
    GATEWAY_INTERN_SHELL_TIMEOUT_MS: String(SHELL_TIMEOUT_MS),
    GATEWAY_INTERN_SHELL_MAX_PROCESSES: String(MAX_PROCESSES),
    GATEWAY_INTERN_SHELL_MAX_FILE_MIB: String(MAX_FILE_MIB),
    GATEWAY_INTERN_SHELL_MAX_MEMORY_MIB: String(MAX_MEMORY_MIB),
    GATEWAY_FILES_DIR: filesDir,
  },
});
test.after(() => rmSync(filesDir, { recursive: true, force: true }));

const homeOf = (env: { dataDir: string }, internId: string) => path.join(env.dataDir, "interns", internId);

test(
  "every command runs under its limits, with umask 077 and a TMPDIR of its own; " +
    "dd of an endless file stops at the file size limit",
  async ({ env }) => {
    const internId = await runningInternId(env, "limited");
    const [limits, umask, tmpdir, filler, size] = await shellResults(env, internId, "limits", [
      "cat /proc/self/limits",
      "umask",
      'echo "$TMPDIR" && touch "$TMPDIR/probe" && stat -c %a "$TMPDIR" "$TMPDIR/probe"',
      "dd if=/dev/zero of=big bs=64k",
      "stat -c %s big",
    ]);
    const limit = (name: string) =>
      new RegExp(`^${name}\\s+(\\S+)\\s+(\\S+)`, "m").exec(String(limits!.stdout))?.slice(1);
    assert.equal(
      limit("Max file size"),
      [String(MAX_FILE_MIB * 1024 * 1024), String(MAX_FILE_MIB * 1024 * 1024)],
      "soft and hard: no command raises it",
    );
    assert.equal(limit("Max address space"), [
      String(MAX_MEMORY_MIB * 1024 * 1024),
      String(MAX_MEMORY_MIB * 1024 * 1024),
    ]);
    assert.equal(
      limit("Max cpu time"),
      [String(SHELL_TIMEOUT_MS / 1000), String(SHELL_TIMEOUT_MS / 1000)],
      "CPU seconds default to the shell's time limit",
    );
    assert.equal(limit("Max core file size"), ["0", "0"]);
    if (process.getuid?.() === 0)
      assert.equal(
        limit("Max processes"),
        [String(MAX_PROCESSES), String(MAX_PROCESSES)],
        "a user of its own: its processes are counted apart",
      );
    assert.is(String(umask!.stdout).trim(), "0077");
    assert.equal(String(tmpdir!.stdout).trim().split("\n"), [path.join(homeOf(env, internId), "tmp"), "700", "600"]);
    assert.is(filler!.timed_out, false, "it stopped on its own, at the limit");
    assert.is.not(filler!.exit_code, 0, JSON.stringify(filler));
    assert.is(String(size!.stdout).trim(), String(MAX_FILE_MIB * 1024 * 1024));
  },
);

const REACH =
  "a shell as the intern's own user reads no uploaded file, video output, config file or data directory file, " +
  "nothing in another intern's home or TMPDIR, and no file another intern left in /tmp";
const BOMB = "a fork bomb stops at the process limit, ends with the command, and the gateway still answers";
const WHY = "only root can run a shell as another user";

if (!notRoot(test, { suite: REACH, why: WHY })) {
  test(REACH, async ({ env }) => {
    const reader = await runningInternId(env, "reader");
    const neighbour = await runningInternId(env, "neighbour");
    // Another tenant's upload and video output, stored as the files API and the video poller store them.
    const upload = await uploadFile(env.gw.url, env.key, Buffer.from("an uploaded secret\n"), {
      filename: "secret.txt",
    });
    assert.is(upload.status, 201, upload.text);
    const job = { id: `video-${process.pid}`, workspace_id: env.workspaceId };
    await env.gw.gateway.deps.blobs.put(outputKey(job, 0), Readable.from([Buffer.from("a rendered secret\n")]));
    // GATEWAY_CONFIG where an operator may keep it: in a directory everyone may enter.
    chmodSync(path.dirname(env.configFile), 0o755);
    // A file in the data directory with the default mode, as older gateways left theirs.
    const dataFile = path.join(env.dataDir, "data", "left-behind.txt");
    writeFileSync(dataFile, "the gateway's own\n", { mode: 0o644 });
    const shared = path.join("/tmp", `sandbox-${process.pid}-${Date.now()}`);
    const [neighbourTmp] = await shellResults(env, neighbour, "neighbour", [
      'echo "$TMPDIR"',
      `echo private > note.txt && echo private > "$TMPDIR/note.txt" && echo private > ${shared}`,
    ]);
    try {
      const targets: Record<string, string> = {
        "an uploaded file": path.join(filesDir, "files", env.workspaceId, String(at(upload.body, "id"))),
        "a video output": path.join(filesDir, outputKey(job, 0)),
        "the config file": env.configFile,
        "a file in the data directory": dataFile,
        "another intern's home": path.join(homeOf(env, neighbour), "work", "note.txt"),
        "another intern's TMPDIR": path.join(String(neighbourTmp!.stdout).trim(), "note.txt"),
        "another intern's file in /tmp": shared,
      };
      for (const [what, file] of Object.entries(targets)) assert.ok(existsSync(file), `${what} is at ${file}`);
      const results = await shellResults(env, reader, "reader", [
        ...Object.values(targets).map((file) => `cat ${file}`),
        'echo mine > "$TMPDIR/note.txt" && cat "$TMPDIR/note.txt"',
      ]);
      Object.keys(targets).forEach((what, i) => {
        assert.is.not(results[i]!.exit_code, 0, `${what} is out of reach: ${JSON.stringify(results[i]).slice(0, 300)}`);
        assert.match(String(results[i]!.stderr), /Permission denied/, what);
      });
      assert.is(String(results.at(-1)!.stdout), "mine\n", "its own files are its own");
      assert.is(statSync(shared).mode & 0o777, 0o600, "written under umask 077");
    } finally {
      rmSync(shared, { force: true });
    }
  });
}

if (!notRoot(test, { suite: BOMB, why: `${WHY} (the process limit counts that user's processes)` })) {
  test(BOMB, async ({ env }) => {
    const internId = await runningInternId(env, "bomber");
    const [uid] = await shellResults(env, internId, "whoami", ["id -u"]);
    const shellUid = Number(String(uid!.stdout).trim());
    // Every copy forks again as soon as a fork is refused: it lasts until the shell's time limit ends it.
    const [bomb] = await shellResults(
      env,
      internId,
      "bomb",
      ["bash -c 'bomb() { while true; do bomb & done; }; bomb'"],
      {
        whileRunning: async (ended) => {
          let most = 0;
          while (!ended()) {
            most = Math.max(most, processesOf(shellUid).length);
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          assert.ok(most > MAX_PROCESSES / 2, `the bomb spread (${most} processes at most)`);
          assert.ok(most <= MAX_PROCESSES, `and stopped at the limit (${most} processes at most)`);
        },
      },
    );
    assert.is(bomb!.timed_out, true, "it ran until the shell's time limit");
    assert.match(String(bomb!.stderr), /fork/i, "forks were refused at the limit");
    await eventually(() => processesOf(shellUid), "nothing the bomb started is left", {
      until: (pids) => pids.length === 0,
    });
    assert.is((await call(env.gw.url, "GET", `/api/v1/interns/${internId}`, { key: env.key })).status, 200);
    const [after] = await shellResults(env, internId, "after-bomb", ["echo still here"]);
    assert.is(after!.stdout, "still here\n");
  });
}

test.run();
