// The rules between a compression's parameters, each true of every request whichever door it came in by
// (POST /api/v1/compress, the console's "Try it", an image URL's options): one place, so the two doors
// cannot disagree about what a request may combine.
import type { ImageFormat } from './formats.ts';

export interface OutputRequest {
  format: ImageFormat;
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
  if (r.targetKb !== undefined && r.format === 'png')
    return { field: 'target_kb', message: `${targetKb} works with jpeg and webp output only: PNG output is lossless` };
  if (r.palette && r.format !== 'png') return { field: 'palette', message: 'palette=true works with png output only' };
  if (r.colors !== undefined && !r.palette) return { field: 'colors', message: 'colors needs palette=true' };
  if (r.lossless && r.format !== 'webp') {
    return {
      field: 'lossless',
      message: 'lossless=true works with webp output only (PNG output is always lossless)',
    };
  }
  if (r.lossless && r.targetKb !== undefined)
    return { field: 'lossless', message: `lossless output has no quality to search: leave out ${targetKb}` };
  return null;
}
