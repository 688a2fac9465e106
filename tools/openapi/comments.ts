import type { AnyDesc, DescFile } from "@bufbuild/protobuf";
import { getComments } from "@bufbuild/protoplugin";

/**
 * Documentation from the protos' comments (the source info buf hands the plugin). Line breaks are
 * kept: OpenAPI descriptions are CommonMark, where a single break is a space and lists survive.
 * Lint directives (`buf:lint:ignore …`) are for buf, not for readers.
 */
export function commentOf(desc: Exclude<AnyDesc, DescFile>): string | undefined {
  const { leading, trailing } = getComments(desc);
  const text = (leading ?? trailing ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => !line.startsWith("buf:lint:"))
    .join("\n")
    .trim();
  return text === "" ? undefined : text;
}

/** The first sentence of a comment, on one line: an operation's summary. */
export function summaryOf(comment: string): string {
  const paragraph = comment.split(/\n\s*\n/, 1)[0]!.replace(/\s*\n\s*/g, " ");
  // A sentence ends at a full stop followed by what starts a sentence, not at "e.g. the".
  const end = /\.\s+(?=[A-Z`(])/.exec(paragraph);
  return end ? paragraph.slice(0, end.index + 1) : paragraph;
}
