// The multipart parts of POST /api/v1/compress: one schema validates them and documents them.
import { z } from '@hono/zod-openapi';
import { FORMAT_ALIASES, FORMAT_ALIASES_HINT, FORMAT_CHOICES } from '../compress/formats.ts';
import { INFO_FORMAT } from '../compress/info/types.ts';
import { METADATA_MODES } from '../compress/metadata.ts';
import {
  DEFAULT_QUALITY,
  MAX_OUTPUT_DIMENSION,
  MAX_PALETTE_COLORS,
  MAX_TARGET_KB,
  MIN_PALETTE_COLORS,
} from '../compress/limits.ts';
import { choiceParam, integerParam, queryObject } from '../params.ts';
import {
  blurParam,
  cssColourParam,
  dprParam,
  fitParam,
  flipParam,
  gravityParam,
  rotateParam,
  sharpenParam,
  trimParam,
} from '../compress/transform/params.ts';
import {
  FIT_MODES,
  FLIPS,
  GRAVITY_NAMES,
  MAX_BLUR,
  MAX_DPR,
  MAX_SHARPEN,
  MIN_BLUR,
  MIN_DPR,
  MIN_SHARPEN,
} from '../compress/transform/options.ts';

const imagePart = z
  .custom<File>((value) => value instanceof File, { error: 'must be a file part, e.g. curl -F image=@photo.jpg' })
  .openapi({
    type: 'string',
    format: 'binary',
    description:
      'The JPEG, PNG, WebP, GIF, AVIF or HEIC/HEIF to compress (at most 10 MB); its type is read from its bytes. An animation (an animated GIF or WebP, an AVIF sequence) gives its first frame (X-Frames says how many it has), or every frame as animated WebP (format=webp; see anim). HEIC is read only where the operator has turned it on (HEIC_INPUT; otherwise 415)',
  });

/** What the `format` part may say: an output format, `keep`, or `json` (the image described, not encoded). */
const UPLOAD_FORMATS = [...FORMAT_CHOICES, INFO_FORMAT] as const;

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
      'Quality for JPEG, WebP, AVIF and JPEG XL (PNG output is lossless), one scale for all four: q gives about the SSIMULACRA2 our JPEG reaches at q, each encoder getting its own number for it (X-Encoder-Quality; for JPEG XL the libjxl distance, lower is better); with palette=true, the palette quality to reach; with target_kb, the highest quality tried',
  }),
  // Left out: JPEG, or PNG with palette=true (compress/request-rules.ts chosenFormat), so no zod default.
  format: choiceParam(UPLOAD_FORMATS, { aliases: FORMAT_ALIASES, hint: FORMAT_ALIASES_HINT })
    .optional()
    .openapi({
      type: 'string',
      enum: [...UPLOAD_FORMATS],
      default: 'jpeg',
      description:
        "Output format; webp, avif and jxl (JPEG XL) need the pro tier. keep: the input's own format (a WebP or AVIF input on the free tier gets JPEG; a GIF input gets PNG, since GIF is not written; a HEIC input gets JPEG). json: no image, its description (ImageInfo; every tier, one compression of the month; not with width, height, target_kb, palette, colors, lossless or a transformation). Left out: jpeg, or png with palette=true. Also accepted, case-insensitively: jpg for jpeg, and media types (image/jpeg, image/png, image/webp, image/avif, image/jxl)",
    }),
  width: integerParam(1, MAX_OUTPUT_DIMENSION).optional().openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_OUTPUT_DIMENSION,
    description:
      "Output width in pixels (the output's axes, after rotate): with fit=scale-down (the default) a maximum, aspect ratio kept, never upscaled; the other fits define their own geometry. Multiplied by dpr",
  }),
  height: integerParam(1, MAX_OUTPUT_DIMENSION).optional().openapi({
    type: 'integer',
    minimum: 1,
    maximum: MAX_OUTPUT_DIMENSION,
    description:
      "Output height in pixels (the output's axes, after rotate): with fit=scale-down (the default) a maximum, aspect ratio kept, never upscaled; the other fits define their own geometry. Multiplied by dpr",
  }),
  fit: fitParam()
    .optional()
    .openapi({
      type: 'string',
      enum: [...FIT_MODES],
      default: 'scale-down',
      description:
        "How the image fits width × height (Cloudflare Images' names). scale-down: inside the box, never enlarged; contain: inside the box, may enlarge; cover: fills the box exactly, the overflow cropped (may enlarge); crop: as cover but never enlarged (an image smaller than the box in both sides is left as it is; smaller in one side only is cropped in the other); pad: as contain, then filled to the box with background; squeeze: stretched to the box. cover, crop, pad and squeeze need both width and height",
    }),
  gravity: gravityParam()
    .optional()
    .openapi({
      type: 'string',
      default: 'center',
      example: '0.5x0.25',
      description: `Where cover and crop keep the image: ${GRAVITY_NAMES.join(', ')}, a focal point XxY (0–1 each, from the top left), the crop centred there as far as the image allows, or auto: the crop placed on what draws the eye (edges, saturated colour, skin tones, scored on a small preview), answered with X-Crop-Confidence; a flat picture falls back to the centre (X-Gravity: center, confidence 0); or face: the crop keeps the faces a detector finds on the preview (all of them when they fit, else the most, then the largest), X-Gravity: face with the detector's confidence, and with no face found it is auto at half its confidence. The crop box used is answered in X-Crop-Box (upright source pixels) with X-Gravity`,
    }),
  rotate: rotateParam()
    .optional()
    .openapi({
      type: 'integer',
      enum: [90, 180, 270],
      description: "Degrees clockwise, after the EXIF orientation and the flip; width and height are the output's axes",
    }),
  flip: flipParam()
    .optional()
    .openapi({
      type: 'string',
      enum: [...FLIPS],
      description: 'Mirror horizontally (h), vertically (v) or both (hv), before the rotation',
    }),
  background: cssColourParam().optional().openapi({
    type: 'string',
    default: 'white',
    example: '#ff8800',
    description:
      'A CSS colour (#rgb, #rrggbb, #rrggbbaa, rgb(…), rgba(…), a name): the fill of fit=pad, and what transparency becomes in JPEG output',
  }),
  dpr: dprParam()
    .optional()
    .openapi({
      type: 'number',
      minimum: MIN_DPR,
      maximum: MAX_DPR,
      default: 1,
      example: 2,
      description: `Device pixel ratio, ${MIN_DPR} to ${MAX_DPR} (two decimals at most): multiplies width and height`,
    }),
  trim: trimParam().optional().openapi({
    type: 'string',
    example: '10;0;10;0',
    description:
      "Cut before anything else, from the upright source: border (a uniform border, its colour the top-left pixel's, each channel within 10 of it, found in a first pass over the rows) or top;right;bottom;left in source pixels. The box kept is answered in X-Crop-Box",
  }),
  blur: blurParam().optional().openapi({
    type: 'integer',
    minimum: MIN_BLUR,
    maximum: MAX_BLUR,
    description:
      "Gaussian blur after the resize, Cloudflare's scale: a sigma of blur/2 output pixels (at 20 most fine detail is gone)",
  }),
  sharpen: sharpenParam().optional().openapi({
    type: 'number',
    minimum: MIN_SHARPEN,
    maximum: MAX_SHARPEN,
    default: 0,
    example: 3,
    description:
      "Unsharp mask of the luminance after the resize (and after blur), Cloudflare's scale 0–10, two decimals at most: adds sharpen/2 times the detail a Gaussian of sigma 1 takes away (at 3 edges are visibly crisper)",
  }),
  metadata: choiceParam(METADATA_MODES)
    .default('strip')
    .openapi({
      type: 'string',
      enum: [...METADATA_MODES],
      default: 'strip',
      description:
        "strip: only the ICC colour profile is kept (when it describes the output); keep: EXIF and XMP are kept too, with orientation reset to 1 since the pixels are written upright. From every input to every output format (JPEG APP1/APP2 segments, PNG iCCP, eXIf and XMP iTXt chunks, WebP ICCP, EXIF and XMP chunks, AVIF colr and items). A lossless JPEG XL of a JPEG (lossless=true) leaves the stored pixels unturned: with strip, an orientation other than 1 stays as an EXIF holding that tag alone; with keep, the JPEG's metadata stays as it was",
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
    "WebP output: lossless WebP (every pixel kept; quality is then ignored). A lossless WebP input gives lossless output by itself when its memory fits. JPEG XL output of a JPEG input: the JPEG's own data re-coded, from which the JPEG is rebuilt byte for byte (djxl): the original file with metadata=keep, the original without its metadata with strip; no resize or transformation (422 otherwise, and for a JPEG libjxl cannot rebuild). Not with target_kb",
  ),
  anim: choiceParam(['true', 'false'])
    .transform((v) => v === 'true')
    .optional()
    .openapi({
      type: 'string',
      enum: ['true', 'false'],
      default: 'true',
      description:
        'An animation (an animated GIF or WebP, an AVIF sequence) to WebP output keeps its animation (every frame, resized and transformed alike; durations kept, a GIF delay of 10 ms or less played as 100 ms as browsers do; loop count kept; X-Frames: N/N). false, any other output format, or target_kb: the first frame only (X-Frames: 1/N)',
    }),
  colors: integerParam(MIN_PALETTE_COLORS, MAX_PALETTE_COLORS).optional().openapi({
    type: 'integer',
    minimum: MIN_PALETTE_COLORS,
    maximum: MAX_PALETTE_COLORS,
    default: MAX_PALETTE_COLORS,
    description: 'With palette=true: the most colours the palette may have',
  }),
}).openapi('CompressRequest');

export type CompressParts = z.output<typeof CompressParts>;
