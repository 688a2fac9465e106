/**
 * A request answered before its body was read through (refused by authentication, over its size
 * limit, an upload that failed, parts after an uploaded file): the answer says
 * `connection: close`, and the connection is closed in stages (RFC 9112 §9.6). node:http would
 * close it at once after the answer; with the client still sending, the kernel then resets the
 * connection, and a reset can reach the client before it has read the answer, which it then never
 * sees. Instead what the client still sends is read and thrown away, the write side is closed
 * after the answer, and the connection once the body is through — or LINGER_BYTES / LINGER_MS
 * have passed, by which time the answer has long been read.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";

const LINGER_BYTES = 64 * 1024 * 1024;
const LINGER_MS = 10_000;
/**
 * A declared body this small is simply read away and the connection kept: a client whose key was
 * refused with its small JSON body still in flight keeps its connection (the body's second packet
 * often arrives after the 401).
 */
const KEEP_ALIVE_REST_BYTES = 64 * 1024;

/** Call before the answer is written. */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete || res.headersSent) return;
  const declared = Number(req.headers["content-length"] ?? NaN);
  if (declared <= KEEP_ALIVE_REST_BYTES) {
    // Read away here: a reader that stopped part-way (an upload) leaves node:http nothing to do.
    req.resume();
    return;
  }
  res.setHeader("connection", "close");
  const socket = req.socket;
  const close = () => socket.destroy();
  const timer = setTimeout(close, LINGER_MS).unref();
  socket.once("close", () => clearTimeout(timer));
  let left = LINGER_BYTES;
  // Read through the request, as its parser expects; a paused request would stop the socket.
  req.on("data", (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) close();
  });
  let ended = false;
  let flushed = false;
  const closeWhenDone = () => ended && flushed && close();
  req.once("end", () => {
    ended = true;
    closeWhenDone();
  });
  req.resume();
  // What node:http calls once a `connection: close` answer is written (an own property, for this
  // socket alone): the write side is closed once the answer is out, the rest once the body is in.
  socket.destroySoon = () => {
    const onFlushed = () => {
      flushed = true;
      closeWhenDone();
    };
    socket.end();
    if (socket.writableFinished) onFlushed();
    else socket.once("finish", onFlushed);
  };
}
