// The multipart parts of POST /api/v1/compress: one schema validates them and documents them.
import { z } from '@hono/zod-openapi';
import { FORMAT_ALIASES, FORMAT_ALIASES_HINT, FORMAT_CHOICES } from '../compress/formats.ts';
import { METADATA_MODES } from '../compress/metadata.ts';
import {
  DEFAULT_QUALITY,
  MAX_OUTPUT_DIMENSION,
  MAX_PALETTE_COLORS,
  MAX_TARGET_KB,
  MIN_PALETTE_COLORS,
} from '../compress/limits.ts';
import { choiceParam, integerParam, queryObject } from '../params.ts';

const imagePart = z
  .custom<File>((value) => value instanceof File, { error: 'must be a file part, e.g. curl -F image=@photo.jpg' })
  .openapi({
    type: 'string',
    format: 'binary',
    description: 'The JPEG, PNG or WebP to compress (at most 10 MB); its type is read from its bytes',
  });

/** A true/false part, false when left out. */
const switchPart = (description: string) =>
  choiceParam(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .openapi({ type: 'string', enum: ['true', 'false'], default: 'false', description });

export const CompressParts = queryObject({
  image: imagePart,
  quality: integerParam(1, 100).default(DEFAULT_QUALITY).openapi({
    type: 'integer',
    minimum: 1,
    maximum: 100,
    default: DEFAULT_QUALITY,
    description:
      'Quality for JPEG, WebP and AVIF (PNG output is lossless), one scale for all three: q gives about the SSIMULACRA2 our JPEG reaches at q, each encoder getting its own number for it (X-Encoder-Quality); with palette=true, the palette quality to reach; with target_kb, the highest quality tried',
  }),
  // Left out: JPEG, or PNG with palette=true (compress/request-rules.ts chosenFormat), so no zod default.
  format: choiceParam(FORMAT_CHOICES, { aliases: FORMAT_ALIASES, hint: FORMAT_ALIASES_HINT })
    .optional()
    .openapi({
      type: 'string',
      enum: [...FORMAT_CHOICES],
      default: 'jpeg',
      description:
        "Output format; webp and avif need the pro tier. keep: the input's own format (a WebP input on the free tier gets JPEG). Left out: jpeg, or png with palette=true. Also accepted, case-insensitively: jpg for jpeg, and media types (image/jpeg, image/png, image/webp, image/avif)",
    }),
  width: integerParam(1, MAX_OUTPUT_DIMENSION).optional().openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_OUTPUT_DIMENSION,
    description: 'Maximum output width in pixels; aspect ratio kept, never upscaled',
  }),
  height: integerParam(1, MAX_OUTPUT_DIMENSION).optional().openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_OUTPUT_DIMENSION,
    description: 'Maximum output height in pixels; aspect ratio kept, never upscaled',
  }),
  metadata: choiceParam(METADATA_MODES)
    .default('strip')
    .openapi({
      type: 'string',
      enum: [...METADATA_MODES],
      default: 'strip',
      description:
        'strip: only the ICC colour profile is kept (when it describes the output); keep: EXIF and XMP are kept too, with orientation reset to 1 since the pixels are written upright. From every input to every output format (JPEG APP1/APP2 segments, PNG iCCP, eXIf and XMP iTXt chunks, WebP ICCP, EXIF and XMP chunks, AVIF colr and items)',
    }),
  target_kb: integerParam(1, MAX_TARGET_KB).optional().openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TARGET_KB,
    description:
      'Target size in KB (1 KB = 1024 bytes): the highest quality whose output fits is searched (at most 8 encodes). Pro tier; JPEG, WebP and AVIF output only',
  }),
  palette: switchPart(
    "PNG output only: quantise to a palette of at most `colors` with dithering, alpha kept, using the fewest colours whose measured quality (pngquant's 0–100 scale) reaches `quality`; the lossless PNG is written instead when it is smaller. X-Quality then gives the measured quality (`lossless` when the lossless PNG was written). Implies format=png when format is left out. Every tier",
  ),
  lossless: switchPart(
    'WebP output only: lossless WebP (every pixel kept; quality is then ignored). A lossless WebP input gives lossless output by itself when its memory fits. Not with target_kb',
  ),
  colors: integerParam(MIN_PALETTE_COLORS, MAX_PALETTE_COLORS).optional().openapi({
    type: 'integer',
    minimum: MIN_PALETTE_COLORS,
    maximum: MAX_PALETTE_COLORS,
    default: MAX_PALETTE_COLORS,
    description: 'With palette=true: the most colours the palette may have',
  }),
}).openapi('CompressRequest');

export type CompressParts = z.output<typeof CompressParts>;
