// The image formats the API reads and writes, and how to recognise them: by their magic bytes only,
// since a declared Content-Type or file name proves nothing.

/** What the API reads. */
export const INPUT_FORMATS = ['jpeg', 'png', 'webp', 'gif', 'avif', 'heic'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];
/**
 * What the API writes: JPEG, PNG, WebP, AVIF and JPEG XL (a GIF is read, never written: `keep` makes it a
 * PNG; a JPEG XL is written, never read).
 */
export const FORMATS = ['jpeg', 'png', 'webp', 'avif', 'jxl'] as const;
export type ImageFormat = (typeof FORMATS)[number];
/**
 * The formats whose encoder, a module of its own, takes the input's upright rows (avif-path.ts, which
 * hands JPEG XL on to jxl/jxl-path.ts): AVIF and JPEG XL, planned alike (memory-plan.ts).
 */
export const rowEncoded = (format: ImageFormat): format is 'avif' | 'jxl' => format === 'avif' || format === 'jxl';

/** Names of the formats read, for messages. */
export const INPUT_FORMAT_NAMES = 'JPEG, PNG, WebP, GIF, AVIF or HEIC';

export const MEDIA_TYPES: Record<ImageFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  avif: 'image/avif',
  jxl: 'image/jxl',
};
/**
 * What the `format` part (and an image URL's `f`) may say: a format, or `keep`, the input's own format
 * (compress/request-rules.ts `chosenFormat`).
 */
export const FORMAT_CHOICES = [...FORMATS, 'keep'] as const;
export type FormatChoice = (typeof FORMAT_CHOICES)[number];

/** Other spellings people use for a format, lower case: the `jpg` extension, and media types. */
export const FORMAT_ALIASES: Readonly<Record<string, ImageFormat>> = {
  jpg: 'jpeg',
  'image/jpg': 'jpeg',
  ...Object.fromEntries(FORMATS.map((f) => [MEDIA_TYPES[f], f])),
};
export const FORMAT_ALIASES_HINT = 'jpg and media types such as image/png work too';

export const EXTENSIONS: Record<ImageFormat, string> = {
  jpeg: 'jpg',
  png: 'png',
  webp: 'webp',
  avif: 'avif',
  jxl: 'jxl',
};
export const FORMAT_NAMES: Record<ImageFormat | InputFormat, string> = {
  jpeg: 'JPEG',
  png: 'PNG',
  webp: 'WebP',
  avif: 'AVIF',
  jxl: 'JPEG XL',
  gif: 'GIF',
  heic: 'HEIC',
};

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0): boolean =>
  bytes.length >= at + prefix.length && prefix.every((b, i) => bytes[at + i] === b);

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

export type Sniffed = { format: InputFormat } | { format: null; seen: string };

/** What the bytes are; for anything unsupported, a name for the error message when we know one. */
export function sniff(bytes: Uint8Array): Sniffed {
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { format: 'jpeg' };
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { format: 'png' };
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return { format: 'webp' };
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return { format: 'gif' };
  if (startsWith(bytes, ascii('ftyp'), 4) && isoBrands(bytes).some((b) => b === 'avif' || b === 'avis'))
    return { format: 'avif' };
  // HEIF's own brands, and its generic ones (mif1, msf1) when no AVIF brand came first: libheif reads them.
  if (startsWith(bytes, ascii('ftyp'), 4) && isoBrands(bytes).some((b) => HEIF_BRANDS.includes(b)))
    return { format: 'heic' };
  return { format: null, seen: describeUnsupported(bytes) };
}

/**
 * The brands of a HEIF with HEVC pictures (HEIC; hevc and hevx name HEVC sequences, read by their primary
 * item when they have one) or any HEIF libheif reads (mif1, msf1). AVIF's are checked first.
 */
export const HEIF_BRANDS: readonly string[] = ['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1'];

/** An ISO media file's brands: the major one, then the compatible ones its file type box lists. */
function isoBrands(bytes: Uint8Array): string[] {
  const size = Math.min(((bytes[0]! << 24) >>> 0) + (bytes[1]! << 16) + (bytes[2]! << 8) + bytes[3]!, bytes.length);
  const brand = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  const brands = bytes.length >= 12 ? [brand(8)] : [];
  for (let at = 16; at + 4 <= size; at += 4) brands.push(brand(at));
  return brands;
}

function describeUnsupported(bytes: Uint8Array): string {
  if (bytes.length === 0) return 'an empty file';
  if (startsWith(bytes, ascii('GIF8'))) return 'a GIF of an unknown version';
  if (startsWith(bytes, ascii('%PDF'))) return 'a PDF';
  if (startsWith(bytes, ascii('BM'))) return 'a BMP';
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'a TIFF';
  // HEIF's brands are sniffed as HEIC above: what is left is other ISO media.
  if (startsWith(bytes, ascii('ftyp'), 4)) return 'an ISO media file (video?)';
  if (startsWith(bytes, [0xff, 0x0a]) || startsWith(bytes, [0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20])) return 'a JPEG XL';
  const head = new TextDecoder().decode(bytes.subarray(0, 512)).trimStart().toLowerCase();
  if (head.startsWith('<svg') || (head.startsWith('<?xml') && head.includes('<svg'))) return 'an SVG';
  return 'not an image we recognise';
}
