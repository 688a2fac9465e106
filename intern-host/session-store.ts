/**
 * The conversation of each session, one JSON file per session in the host's state directory, so a
 * later run of the session (after a suspend and provision too) continues from it. Written to a
 * temporary file and renamed, so a crash never leaves half a file. Runs save after every step, and
 * a cancelled run may still be saving while the session's next run saves: each write has a
 * temporary file of its own, so the last rename wins whole.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ChatMessage } from "./agent/model-client.js";

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

export class SessionStore {
  constructor(private readonly dir: string) {}

  async load(sessionId: string): Promise<ChatMessage[]> {
    let text: string;
    try {
      text = await readFile(this.file(sessionId), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) throw new Error(`session ${sessionId}: the stored conversation is not a list`);
    return parsed as ChatMessage[];
  }

  async save(sessionId: string, messages: ChatMessage[]): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = this.file(sessionId);
    const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    await writeFile(temporary, JSON.stringify(messages));
    await rename(temporary, file);
  }

  private file(sessionId: string): string {
    // The gateway makes the ids; the check keeps a hand-made one from naming another file.
    if (!SESSION_ID.test(sessionId)) throw new Error("malformed session id");
    return path.join(this.dir, `${sessionId}.json`);
  }
}
