// The upload's parts as the compression checks them, whichever door they came in by (POST /api/v1/compress,
// the console's Try it, its planner): validated by the doors' schema (src/routes/compress-schema.ts, whose
// output has this shape), checked against the key's image tier, and turned into the pipeline's request.
import { can, canWrite } from '../accounts/entitlements.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { ApiError } from '../errors.ts';
import { requireFormat } from './entitlement.ts';
import { sniff, type FormatChoice, type ImageFormat, type InputFormat } from './formats.ts';
import { brokenInfoRule } from './info/rules.ts';
import { INFO_FORMAT, type InfoRequest } from './info/types.ts';
import type { MetadataMode } from './metadata.ts';
import { brokenRule, chosenFormat } from './request-rules.ts';
import type { CompressRequest } from './types.ts';
import { boxOf, brokenTransformRule, transformOf, type TransformOptions } from './transform/options.ts';

/** The parts of a compression upload other than the image, as validated (names as the API spells them). */
export interface UploadParts extends TransformOptions {
  quality: number;
  /** `json`: describe the image instead (src/compress/info/). */
  format?: FormatChoice | typeof INFO_FORMAT;
  width?: number;
  height?: number;
  metadata: MetadataMode;
  target_kb?: number;
  palette?: boolean;
  lossless?: boolean;
  /** false: an animation gives its first frame even as WebP. */
  anim?: boolean;
  colors?: number;
}

/**
 * The pipeline's request from the validated parts and the image's bytes, its output format settled now that
 * the input's is known (`keep`), and the rules checked again for it.
 */
export const compressRequestOf = (
  parts: UploadParts,
  bytes: Uint8Array,
  imageTier: ImageTier,
): CompressRequest | InfoRequest => {
  if (parts.format === INFO_FORMAT) {
    checkParts(parts, imageTier);
    return { format: INFO_FORMAT, bytes, metadata: parts.metadata };
  }
  return compressionOf({ ...parts, format: parts.format }, bytes, imageTier);
};

const compressionOf = (
  parts: UploadParts & { format?: FormatChoice },
  bytes: Uint8Array,
  imageTier: ImageTier,
): CompressRequest => ({
  bytes,
  // Known once the input's format is given: only a `keep` before the upload is read leaves it open.
  format: checkParts(parts, imageTier, sniff(bytes).format) as ImageFormat,
  quality: parts.quality,
  ...boxOf(parts),
  transform: transformOf(parts),
  targetKb: parts.target_kb,
  metadata: parts.metadata,
  palette: parts.palette,
  colors: parts.colors,
  lossless: parts.lossless,
  anim: parts.anim,
});

/**
 * The rules between parts and the key's image tier, checked before the image is read (`input` undefined;
 * a `keep` then waits for it) and again with its format. The "Try it" planner asks the same, so the page
 * warns of exactly what an upload would be refused for. Returns the output format, once known.
 */
export function checkParts(
  parts: UploadParts,
  imageTier: ImageTier,
  input?: InputFormat | null,
): ImageFormat | undefined {
  if (parts.format === INFO_FORMAT) {
    const broken = brokenInfoRule(parts);
    if (broken) throw new ApiError('bad_request', broken.message, { param: broken.field });
    return undefined;
  }
  const format = chosenFormat(parts.format, parts.palette, input, canWrite({ image: imageTier }, 'webp'));
  if (format !== undefined) requireFormat(imageTier, format, 'format');
  if (parts.target_kb !== undefined && !can({ image: imageTier }, 'target_kb'))
    throw new ApiError('plan_upgrade_required', 'target_kb needs the pro tier', { param: 'target_kb' });
  const broken = brokenRule({ ...parts, format, targetKb: parts.target_kb }) ?? brokenTransformRule(parts);
  if (broken) throw new ApiError('bad_request', broken.message, { param: broken.field });
  return format;
}
