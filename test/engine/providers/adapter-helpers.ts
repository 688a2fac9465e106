import type { JsonObject } from "@bufbuild/protobuf";
import type { Test } from "uvu";
import { suite } from "../../support/suite.js";
import * as assert from "uvu/assert";
import type { ChatStream } from "../../../server/engine/providers/chat-api.js";
import { UpstreamError, type ProviderKind, type UpstreamTarget } from "../../../server/engine/providers/provider.js";
import { startMockUpstream, type MockUpstream } from "../../upstream/mock-upstream.js";

/** A suite with its own mock upstream, reset before each test. */
export function mockSuite(name: string): Test<{ mock: MockUpstream }> {
  const test = suite<{ mock: MockUpstream }>(name);
  test.before(async (ctx) => {
    ctx.mock = await startMockUpstream();
  });
  test.after(async (ctx) => {
    await ctx.mock.close();
  });
  test.before.each(({ mock }) => mock.reset());
  return test;
}

export function targetFor(
  mock: MockUpstream,
  kind: ProviderKind,
  upstreamModelId: string,
  overrides: Partial<UpstreamTarget> = {},
): UpstreamTarget {
  return {
    kind,
    baseUrl: kind === "openai" ? mock.openaiBaseUrl : mock.anthropicBaseUrl,
    apiKey: mock.apiKey,
    upstreamModelId,
    timeoutMs: 10_000,
    ...overrides,
  };
}

export function signal(): AbortSignal {
  return new AbortController().signal;
}

/** The UpstreamError a call fails with; anything else fails the test. */
export async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamError) return err;
    throw err;
  }
  assert.unreachable("expected an UpstreamError");
  throw new Error("unreachable");
}

export async function collect(stream: ChatStream): Promise<JsonObject[]> {
  const chunks: JsonObject[] = [];
  for await (const chunk of stream.chunks) chunks.push(chunk);
  return chunks;
}

/** Chunks seen before the iterator threw, and what it threw. */
export async function collectUntilFailure(stream: ChatStream): Promise<{ chunks: JsonObject[]; error: UpstreamError }> {
  const chunks: JsonObject[] = [];
  const error = await failure(
    (async () => {
      for await (const chunk of stream.chunks) chunks.push(chunk);
    })(),
  );
  return { chunks, error };
}

/** Delta fields of the first choice, in order. */
export function deltas(chunks: JsonObject[]): JsonObject[] {
  const out: JsonObject[] = [];
  for (const chunk of chunks) {
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    if (
      choice &&
      typeof choice === "object" &&
      !Array.isArray(choice) &&
      choice.delta &&
      typeof choice.delta === "object" &&
      !Array.isArray(choice.delta)
    ) {
      out.push(choice.delta);
    }
  }
  return out;
}

export function contentOf(chunks: JsonObject[]): string {
  return deltas(chunks)
    .map((d) => (typeof d.content === "string" ? d.content : ""))
    .join("");
}

export function finishReasons(chunks: JsonObject[]): unknown[] {
  return chunks
    .flatMap((chunk) => (Array.isArray(chunk.choices) ? chunk.choices : []))
    .map((choice) =>
      choice && typeof choice === "object" && !Array.isArray(choice) ? choice.finish_reason : undefined,
    )
    .filter((reason) => reason !== null && reason !== undefined);
}

/** The body the mock received for the last request. */
export function lastBody(mock: MockUpstream): Record<string, unknown> {
  const last = mock.requests[mock.requests.length - 1];
  assert.ok(last, "the mock received a request");
  return last.body as Record<string, unknown>;
}
