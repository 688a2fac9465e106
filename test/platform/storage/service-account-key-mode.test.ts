import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as assert from "uvu/assert";
import { startTestGateway } from "../../support/gateway.js";
import { captureLogs } from "../../support/log-lines.js";
import { notRoot } from "../../support/required-tools.js";
import { suite } from "../../support/suite.js";

/**
 * The Google service account key file that GATEWAY_CONFIG names (`google_service_account`) is
 * narrowed at start like GATEWAY_CONFIG itself (server/platform/storage/private-paths.ts), so that
 * interns' shells and every other OS user cannot read the private key.
 */
const SUITE = "storage: the service account key file GATEWAY_CONFIG names";
const test = suite<{ dir: string }>(SUITE);

const PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\nnot-a-real-key-7c1e\n-----END PRIVATE KEY-----\n";

test.before(async (context) => {
  context.dir = await fs.mkdtemp(path.join(os.tmpdir(), "service-account-"));
});
test.after(async ({ dir }) => {
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

test("a gateway started with a 0644 key file leaves it 0640, says so, and never logs the key", async ({ dir }) => {
  const keyFile = path.join(dir, "service-account.json");
  await fs.writeFile(
    keyFile,
    JSON.stringify({
      type: "service_account",
      client_email: "gateway@project.iam.gserviceaccount.com",
      private_key: PRIVATE_KEY,
    }),
  );
  await fs.chmod(keyFile, 0o644);
  const config = path.join(dir, "gateway.json");
  await fs.writeFile(
    config,
    JSON.stringify({
      providers: [
        {
          slug: "vertex",
          kind: "google",
          base_url: "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google",
          google_service_account: keyFile,
        },
      ],
      models: [
        {
          id: "cloud/vertex",
          name: "Vertex",
          context_length: 8000,
          endpoints: [
            {
              provider: "vertex",
              upstream_model_id: "gemini-x",
              pricing: { prompt: "0.000001", completion: "0.000002" },
            },
          ],
        },
      ],
    }),
    { mode: 0o600 },
  );
  const logs = captureLogs();
  const gw = await startTestGateway({ GATEWAY_CONFIG: config }, {}, logs.log);
  await gw.stop();

  assert.is((await fs.stat(keyFile)).mode & 0o777, 0o640);
  const narrowed = logs.lines.filter((line) => line.file === keyFile);
  assert.equal(
    narrowed.map(({ msg, from, to }) => ({ msg, from, to })),
    [
      {
        msg:
          "the google_service_account key file of provider " +
          "'vertex' was readable by every OS user; closed it to them",
        from: "644",
        to: "640",
      },
    ],
  );
  assert.not.ok(JSON.stringify(logs.lines).includes("not-a-real-key"), "the private key is never logged");
});

/** A user that owns none of the test's files, so its chmod of them fails. */
const NOBODY = 65_534;
const PRIVATE_PATHS = fileURLToPath(new URL("../../../server/platform/storage/private-paths.ts", import.meta.url));

if (
  !notRoot(test, {
    suite: `${SUITE}: a key file that cannot be narrowed`,
    why: "only root runs the gateway's check as a user that cannot change the file",
  })
) {
  test("a key file that cannot be narrowed stops the start with the reason and what to do", async ({ dir }) => {
    // Traversable by the other user, who may read but not change the file.
    const open = path.join(dir, "open");
    await fs.mkdir(open);
    await fs.chmod(dir, 0o755);
    await fs.chmod(open, 0o755);
    const keyFile = path.join(open, "service-account.json");
    await fs.writeFile(keyFile, "{}");
    await fs.chmod(keyFile, 0o644);
    const script =
      `import(${JSON.stringify(PRIVATE_PATHS)}).then((m) => m.closeKeyFile(${JSON.stringify(keyFile)}, ` +
      `"the key file", { warn() {} })).then(() => console.log("started"), (err) => console.log(err.message));`;
    const said = await new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        ["--import", "tsx", "-e", script],
        { uid: NOBODY, gid: NOBODY, cwd: process.cwd() },
        (err, stdout) => (err ? reject(err) : resolve(stdout.trim())),
      );
    });
    assert.match(
      said,
      `the key file ${keyFile} is readable by every OS user, ` +
        "interns' shells included, and its mode could not be narrowed (EPERM",
    );
    assert.match(said, "make it readable by the gateway's user alone");
    assert.is((await fs.stat(keyFile)).mode & 0o777, 0o644);
  });
}

test.run();
