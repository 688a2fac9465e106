/**
 * `npm run admin -- <command>`: the operator's command line (cmd/admin-command.ts).
 *
 * @module
 */
import { runAdmin } from "./admin-command.js";

process.exitCode = await runAdmin(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
