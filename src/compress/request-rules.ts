// The rules between a compression's parameters, each true of every request whichever door it came in by
// (POST /api/v1/compress, the console's "Try it", an image URL's options): one place, so the two doors
// cannot disagree about what a request may combine.
import type { FormatChoice, ImageFormat, InputFormat } from './formats.ts';

export interface OutputRequest {
  /** undefined: not known yet (`keep` before the input is read); the rules of the output format wait for it. */
  format: ImageFormat | undefined;
  targetKb?: number;
  palette?: boolean;
  colors?: number;
  lossless?: boolean;
}

type Field = 'target_kb' | 'palette' | 'colors' | 'lossless';

export interface RuleBroken {
  /** The parameter at fault, as /compress names it. */
  field: Field;
  message: string;
}

/**
 * The first rule the request breaks, or null. `names` gives a door's own spelling of a parameter (an
 * image URL says `kb` for target_kb); the message names the parameter that way.
 */
export function brokenRule(r: OutputRequest, names: Partial<Record<Field, string>> = {}): RuleBroken | null {
  const targetKb = names.target_kb ?? 'target_kb';
  const known = r.format !== undefined;
  if (known && r.targetKb !== undefined && r.format === 'png')
    return {
      field: 'target_kb',
      message: `${targetKb} works with jpeg, webp, avif and jxl output only: PNG output is lossless`,
    };
  if (known && r.palette && r.format !== 'png')
    return { field: 'palette', message: 'palette=true works with png output only' };
  if (r.colors !== undefined && !r.palette) return { field: 'colors', message: 'colors needs palette=true' };
  if (known && r.lossless && r.format !== 'webp' && r.format !== 'jxl') {
    return {
      field: 'lossless',
      message: 'lossless=true works with webp output, and jxl output of a JPEG (PNG output is always lossless)',
    };
  }
  if (r.lossless && r.targetKb !== undefined)
    return { field: 'lossless', message: `lossless output has no quality to search: leave out ${targetKb}` };
  return null;
}

/**
 * `keep`: the input's own format, except a WebP input where the tier writes no WebP, which gets JPEG (a
 * photo format every client reads), and a GIF, which gets PNG: GIF is not written, and a GIF is a
 * graphic of at most 256 colours per frame whose lossless PNG keeps every pixel and its transparency on
 * every tier, often in fewer bytes; an AVIF stays AVIF where the tier writes it (pro), else JPEG. Image
 * URLs without `f` follow the same rule (img/options.ts).
 */
export function keptFormat(input: ImageFormat | InputFormat, webpAllowed: boolean): ImageFormat {
  if (input === 'gif') return 'png';
  // HEIC is read, never written: a photo, kept as JPEG, which every client reads.
  if (input === 'heic') return 'jpeg';
  // AVIF output is the pro tier's, and that tier writes WebP too: the others keep an AVIF as JPEG.
  if (input === 'avif' && !webpAllowed) return 'jpeg';
  return input === 'webp' && !webpAllowed ? 'jpeg' : input;
}

/**
 * The output format a request's `format` means: as given; JPEG (the contract's default) when left out, or
 * PNG with palette=true (a palette exists only in PNG); for `keep`, the input's (`keptFormat`), or
 * undefined while the input is not read yet (null: read, but no format we know, which the pipeline refuses).
 */
export function chosenFormat(
  choice: FormatChoice | undefined,
  palette: boolean | undefined,
  input: InputFormat | null | undefined,
  webpAllowed: boolean,
): ImageFormat | undefined {
  if (choice === 'keep') return input === undefined ? undefined : keptFormat(input ?? 'jpeg', webpAllowed);
  return choice ?? (palette ? 'png' : 'jpeg');
}
