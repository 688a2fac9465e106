import { crc32, deflateRawSync, deflateSync } from "node:zlib";

/**
 * One small, valid sample of every upload type, built here from the formats' specifications (no
 * binary files from elsewhere), and samples that must be refused. Each builder documents the
 * structure it writes.
 */
export interface Sample {
  name: string;
  bytes: Buffer;
  /** What the gateway must report. */
  mimeType: string;
}

const u16be = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u32be = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const u16le = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32le = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const ascii = (text: string) => Buffer.from(text, "latin1");

/** PDF 1.4: catalog, page tree, one empty page, a cross-reference table with exact offsets. */
export function pdf(): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>",
  ];
  let body = "%PDF-1.4\n%\xe2\xe3\xcf\xd3\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body, "latin1"));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, "latin1");
  body +=
    `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n` +
    `${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return ascii(body);
}

/** PNG: signature, IHDR (1×1, 8-bit RGB), IDAT (zlib of one filtered scanline), IEND; CRC-32 per chunk. */
export function png(): Buffer {
  const chunk = (type: string, data: Buffer) =>
    Buffer.concat([u32be(data.length), ascii(type), data, u32be(crc32(Buffer.concat([ascii(type), data])))]);
  const ihdr = Buffer.concat([u32be(1), u32be(1), Buffer.from([8, 2, 0, 0, 0])]);
  const scanline = Buffer.from([0, 0x33, 0x99, 0xff]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(scanline)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * Baseline JPEG of one grey pixel: SOI, JFIF APP0, a quantisation table of ones, SOF0 (1×1, one
 * component), DC and AC Huffman tables with a single one-bit code each (DC category 0, AC end of
 * block), SOS, the scan (code 0 for DC difference 0, code 0 for EOB, padded with ones), EOI.
 */
export function jpeg(): Buffer {
  const segment = (marker: number, data: Buffer) =>
    Buffer.concat([Buffer.from([0xff, marker]), u16be(data.length + 2), data]);
  const oneCodeTable = (tableClass: number) =>
    Buffer.concat([
      Buffer.from([tableClass << 4]),
      Buffer.from([1, ...new Array<number>(15).fill(0)]),
      Buffer.from([0]),
    ]);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.concat([ascii("JFIF\0"), Buffer.from([1, 1, 0]), u16be(1), u16be(1), Buffer.from([0, 0])])),
    segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    segment(0xc0, Buffer.from([8, 0, 1, 0, 1, 1, 1, 0x11, 0])),
    segment(0xc4, oneCodeTable(0)),
    segment(0xc4, oneCodeTable(1)),
    segment(0xda, Buffer.from([1, 1, 0x00, 0, 63, 0])),
    Buffer.from([0b0011_1111]),
    Buffer.from([0xff, 0xd9]),
  ]);
}

/**
 * GIF89a of one pixel: a two-colour global table, an image descriptor, LZW data with minimum code
 * size 2 (clear code 4, index 0, end code 5, three bits each, packed from the low bit: 0x44 0x01).
 */
export function gif(): Buffer {
  return Buffer.concat([
    ascii("GIF89a"),
    u16le(1),
    u16le(1),
    Buffer.from([0x80, 0, 0]),
    Buffer.from([0, 0, 0, 0xff, 0xff, 0xff]),
    Buffer.from([0x2c]),
    u16le(0),
    u16le(0),
    u16le(1),
    u16le(1),
    Buffer.from([0]),
    Buffer.from([2, 2, (4 | (0 << 3) | ((5 & 3) << 6)) & 0xff, 5 >> 2, 0]),
    Buffer.from([0x3b]),
  ]);
}

/**
 * WebP lossless (VP8L) of one pixel: signature 0x2f, 14-bit width−1 and height−1, alpha and version
 * bits, no transform, no colour cache, no meta prefix codes, then the five prefix codes as "simple"
 * codes of one symbol each (green, red, blue, alpha, distance), so the pixel itself takes no bits.
 */
export function webp(): Buffer {
  const bits: number[] = [];
  const put = (value: number, count: number) => {
    for (let i = 0; i < count; i++) bits.push((value >> i) & 1);
  };
  put(0x2f, 8);
  put(0, 14);
  put(0, 14);
  put(0, 1);
  put(0, 3);
  put(0, 1); // no transform
  put(0, 1); // no colour cache
  put(0, 1); // no meta prefix codes
  for (const symbol of [0x99, 0x33, 0xff, 0xff]) {
    put(1, 1); // simple code
    put(0, 1); // one symbol
    put(1, 1); // eight-bit symbol
    put(symbol, 8);
  }
  put(1, 1); // distance: simple code, one one-bit symbol 0
  put(0, 1);
  put(0, 1);
  put(0, 1);
  const data = Buffer.alloc(Math.ceil(bits.length / 8));
  bits.forEach((bit, i) => (data[i >> 3]! |= bit << (i & 7)));
  const padded = data.length % 2 === 1 ? Buffer.concat([data, Buffer.alloc(1)]) : data;
  const chunk = Buffer.concat([ascii("VP8L"), u32le(data.length), padded]);
  return Buffer.concat([ascii("RIFF"), u32le(4 + chunk.length), ascii("WEBP"), chunk]);
}

/** A ZIP archive (local headers, deflated entries, central directory, end record), entries in order. */
export function zip(entries: Array<[string, string]>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const raw = Buffer.from(text, "utf8");
    const packed = deflateRawSync(raw);
    const nameBytes = Buffer.from(name, "utf8");
    const common = Buffer.concat([
      u16le(20),
      u16le(0x0800),
      u16le(8),
      u16le(0),
      u16le(0x21),
      u32le(crc32(raw)),
      u32le(packed.length),
      u32le(raw.length),
      u16le(nameBytes.length),
      u16le(0),
    ]);
    const local = Buffer.concat([u32le(0x04034b50), common, nameBytes, packed]);
    centrals.push(
      Buffer.concat([
        u32le(0x02014b50),
        u16le(20),
        common,
        u16le(0),
        u16le(0),
        u16le(0),
        u32le(0),
        u32le(offset),
        nameBytes,
      ]),
    );
    locals.push(local);
    offset += local.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.concat([
    u32le(0x06054b50),
    u16le(0),
    u16le(0),
    u16le(entries.length),
    u16le(entries.length),
    u32le(directory.length),
    u32le(offset),
    u16le(0),
  ]);
  return Buffer.concat([...locals, directory, end]);
}

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const RELS = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";

/** An Office Open XML package: content types first (as Office writes them), package relationships, the parts. */
function ooxml(mainPart: string, mainType: string, parts: Array<[string, string]>): Buffer {
  const types =
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
    '<Default Extension="xml" ContentType="application/xml"/>' +
    `<Override PartName="/${mainPart}" ContentType="${mainType}"/></Types>`;
  const rels =
    `${XML}<Relationships xmlns="${RELS}"><Relationship Id="rId1" ` +
    `Type="${OFFICE_DOCUMENT}" Target="${mainPart}"/></Relationships>`;
  return zip([["[Content_Types].xml", types], ["_rels/.rels", rels], ...parts]);
}

export function docx(): Buffer {
  return ooxml(
    "word/document.xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    [
      [
        "word/document.xml",
        `${XML}<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
          "<w:body><w:p><w:r><w:t>Hello</w:t></w:r></w:p></w:body></w:document>",
      ],
    ],
  );
}

export function xlsx(): Buffer {
  const main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
  return ooxml("xl/workbook.xml", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml", [
    [
      "xl/workbook.xml",
      `${XML}<workbook xmlns="${main}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">` +
        `<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ],
    [
      "xl/_rels/workbook.xml.rels",
      `${XML}<Relationships xmlns="${RELS}"><Relationship Id="rId1" ` +
        `Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" ` +
        `Target="worksheets/sheet1.xml"/></Relationships>`,
    ],
    [
      "xl/worksheets/sheet1.xml",
      `${XML}<worksheet xmlns="${main}"><sheetData>` +
        `<row r="1"><c r="A1" t="inlineStr"><is><t>Hello</t></is></c></row></sheetData></worksheet>`,
    ],
  ]);
}

export function pptx(): Buffer {
  return ooxml(
    "ppt/presentation.xml",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    [
      [
        "ppt/presentation.xml",
        `${XML}<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">` +
          `<p:sldSz cx="9144000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>`,
      ],
    ],
  );
}

/**
 * MP3: three MPEG-1 Layer III frames, 128 kbit/s, 44.1 kHz, mono, no CRC (header FF FB 90 C4),
 * 417 bytes each; zero side information and main data decode to silence.
 */
export function mp3(): Buffer {
  const frame = Buffer.alloc(417);
  Buffer.from([0xff, 0xfb, 0x90, 0xc4]).copy(frame);
  return Buffer.concat([frame, frame, frame]);
}

/** WAV: RIFF/WAVE with a PCM fmt chunk (8 kHz, mono, 16-bit) and 80 samples of a sine wave. */
export function wav(): Buffer {
  const samples = Buffer.alloc(160);
  for (let i = 0; i < 80; i++) samples.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * i) / 16)), i * 2);
  const fmt = Buffer.concat([
    ascii("fmt "),
    u32le(16),
    u16le(1),
    u16le(1),
    u32le(8000),
    u32le(16000),
    u16le(2),
    u16le(16),
  ]);
  const data = Buffer.concat([ascii("data"), u32le(samples.length), samples]);
  return Buffer.concat([ascii("RIFF"), u32le(4 + fmt.length + data.length), ascii("WAVE"), fmt, data]);
}

/**
 * FLAC: `fLaC`, a STREAMINFO block (192-sample blocks, 8 kHz, mono, 16-bit, 192 samples), and one
 * frame: header (fixed blocking, 192 samples, 8 kHz, mono, 16-bit, frame 0) with its CRC-8, a
 * CONSTANT subframe of value 0, and the frame's CRC-16.
 */
export function flac(): Buffer {
  const info = Buffer.alloc(34);
  info.writeUInt16BE(192, 0);
  info.writeUInt16BE(192, 2);
  // sample rate (20 bits) | channels − 1 (3) | bits per sample − 1 (5) | total samples (36)
  info.writeBigUInt64BE((8000n << 44n) | (0n << 41n) | (15n << 36n) | 192n, 10);
  const header = Buffer.from([0xff, 0xf8, 0x14, 0x08, 0x00]);
  const frame = Buffer.concat([header, Buffer.from([crc8(header)]), Buffer.from([0x00, 0x00, 0x00])]);
  return Buffer.concat([ascii("fLaC"), Buffer.from([0x80, 0, 0, 34]), info, frame, u16be(crc16(frame))]);
}

function crc8(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let i = 0; i < 8; i++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

function crc16(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/**
 * Ogg Opus: three pages (OpusHead on the first, OpusTags, one 20 ms packet of a single TOC byte on
 * the last), each with its segment table and the Ogg CRC-32 (polynomial 0x04c11db7, not reflected).
 */
export function ogg(): Buffer {
  const head = Buffer.concat([
    ascii("OpusHead"),
    Buffer.from([1, 1]),
    u16le(312),
    u32le(48000),
    u16le(0),
    Buffer.from([0]),
  ]);
  const vendor = ascii("gateway-tests");
  const tags = Buffer.concat([ascii("OpusTags"), u32le(vendor.length), vendor, u32le(0)]);
  const audio = Buffer.from([0xf8]);
  return Buffer.concat([oggPage(head, 0x02, 0n, 0), oggPage(tags, 0x00, 0n, 1), oggPage(audio, 0x04, 960n, 2)]);
}

function oggPage(packet: Buffer, flags: number, granule: bigint, sequence: number): Buffer {
  const header = Buffer.alloc(27);
  ascii("OggS").copy(header);
  header[5] = flags;
  header.writeBigUInt64LE(granule, 6);
  header.writeUInt32LE(0x6761_7465, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = 1;
  const page = Buffer.concat([header, Buffer.from([packet.length]), packet]);
  page.writeUInt32LE(oggCrc(page), 22);
  return page;
}

function oggCrc(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let i = 0; i < 8; i++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
    crc >>>= 0;
  }
  return crc;
}

const JSON_SAMPLE = {
  name: "gateway",
  items: [1, 2.5, -3e2],
  nested: { ok: true, none: null, text: 'a "quoted" \\u00e9 word' },
};

export const TEXTS = {
  json: `${JSON.stringify(JSON_SAMPLE, null, 2)}\n`,
  ndjson: '{"id":1,"text":"first"}\n{"id":2,"text":"second, with a comma"}\n\n[3,"third"]\n',
  csv: 'name,age,city\r\nAda,36,London\r\n"Hopper, Grace",85,"New York, ""NY"""\r\n',
  markdown: "# Notes\n\nSome *emphasis* and a [link](https://example.com).\n\n- one\n- two\n",
  plain: "Just some words.\nAnother line of text, in Ünïcödé.\n",
} as const;

/** Every accepted format, each with the type the gateway must report. */
export function acceptedSamples(): Sample[] {
  return [
    { name: "document.pdf", bytes: pdf(), mimeType: "application/pdf" },
    { name: "image.png", bytes: png(), mimeType: "image/png" },
    { name: "image.jpg", bytes: jpeg(), mimeType: "image/jpeg" },
    { name: "image.gif", bytes: gif(), mimeType: "image/gif" },
    { name: "image.webp", bytes: webp(), mimeType: "image/webp" },
    {
      name: "document.docx",
      bytes: docx(),
      mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    },
    {
      name: "sheet.xlsx",
      bytes: xlsx(),
      mimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    },
    {
      name: "slides.pptx",
      bytes: pptx(),
      mimeType: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    },
    { name: "audio.mp3", bytes: mp3(), mimeType: "audio/mpeg" },
    { name: "audio.wav", bytes: wav(), mimeType: "audio/wav" },
    { name: "audio.flac", bytes: flac(), mimeType: "audio/flac" },
    { name: "audio.ogg", bytes: ogg(), mimeType: "audio/ogg" },
    { name: "data.json", bytes: Buffer.from(TEXTS.json), mimeType: "application/json" },
    { name: "data.ndjson", bytes: Buffer.from(TEXTS.ndjson), mimeType: "application/x-ndjson" },
    { name: "table.csv", bytes: Buffer.from(TEXTS.csv), mimeType: "text/csv" },
    { name: "notes.md", bytes: Buffer.from(TEXTS.markdown), mimeType: "text/markdown" },
    { name: "notes.txt", bytes: Buffer.from(TEXTS.plain), mimeType: "text/plain" },
  ];
}

/** A Windows executable's start: the MZ header pointing at a PE header for x86-64. */
export function exe(): Buffer {
  const bytes = Buffer.alloc(256);
  ascii("MZ").copy(bytes);
  bytes.writeUInt32LE(0x80, 0x3c);
  ascii("PE\0\0").copy(bytes, 0x80);
  bytes.writeUInt16LE(0x8664, 0x84);
  return bytes;
}

/** A plain ZIP archive of one text file: a container, not an accepted type. */
export function plainZip(): Buffer {
  return zip([["hello.txt", "hello\n"]]);
}
