/**
 * What an upload may be: the binary formats by their file-type extension, and text.
 *
 * @module
 */

/** file-type's extension → the type we report. */
export const ACCEPTED_BINARY: Record<string, string> = {
  pdf: "application/pdf",
  png: "image/png",
  // An animated PNG is a PNG.
  apng: "image/png",
  jpg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  mp3: "audio/mpeg",
  wav: "audio/wav",
  flac: "audio/flac",
  // Ogg audio: Vorbis, Opus, FLAC in Ogg, Speex.
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  spx: "audio/ogg",
};

/** How error messages name the accepted types. */
export const ACCEPTED_TYPES_TEXT = "PDF, PNG, JPEG, GIF, WebP, DOCX, XLSX, PPTX, MP3, WAV, FLAC, OGG or UTF-8 text";
