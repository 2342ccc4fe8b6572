// The answer of format=json (POST /compress) and f=json (image URLs): one schema documents it, and the
// service's ImageInfo type must stay assignable to it (checked below at compile time).
import { z } from '@hono/zod-openapi';
import { EXIF_TEXT_MAX } from '../compress/info/exif-summary.ts';
import type { ImageInfo } from '../compress/info/types.ts';
import { INPUT_FORMATS } from '../compress/formats.ts';

const text = (description: string) => z.string().max(EXIF_TEXT_MAX).nullable().openapi({ description });

export const ImageInfoSchema = z
  .object({
    width: z.number().int().openapi({ description: 'Upright width in pixels (after EXIF orientation)' }),
    height: z.number().int().openapi({ description: 'Upright height in pixels (after EXIF orientation)' }),
    format: z.enum(INPUT_FORMATS).openapi({ description: "The upload's format, from its bytes" }),
    bytes: z.number().int().openapi({ description: 'Size of the upload in bytes' }),
    orientation: z.number().int().min(1).max(8).openapi({ description: 'EXIF orientation, 1 when none is given' }),
    has_alpha: z
      .boolean()
      .openapi({ description: 'The file declares an alpha channel or transparency (PNG tRNS, WebP ALPH)' }),
    bit_depth: z
      .number()
      .int()
      .openapi({ description: 'Bits per sample: JPEG 8 or 12, PNG 1–16 (a palette image: 8), WebP 8' }),
    icc: z
      .object({
        description: z.string().nullable().openapi({ description: "The profile's description (its desc tag)" }),
        color_space: z.string().nullable().openapi({ description: 'RGB, GRAY, CMYK…' }),
        bytes: z.number().int(),
      })
      .nullable()
      .openapi({ description: 'The embedded ICC profile; null when there is none' }),
    hdr: z.boolean().openapi({
      description:
        "The file carries HDR: a gain map, or the PQ or HLG transfer in a PNG cICP chunk, an ICC profile's cicp tag or an AVIF's or HEIC's nclx",
    }),
    gain_map: z.boolean().openapi({ description: 'A JPEG with a gain map (Ultra HDR, ISO 21496-1)' }),
    frames: z.number().int().openapi({
      description: 'Frames: 1 for a still image; an animated PNG, GIF or WebP, or an AVIF sequence, its count',
    }),
    duration_ms: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "An animation's total duration; null for a still image" }),
    loop: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "An animation's loop count (0: forever); null for a still image" }),
    exif: z
      .object({
        make: text('Camera maker (Make)'),
        model: text('Camera model (Model)'),
        taken_at: z.string().nullable().openapi({
          description:
            "When it was taken (DateTimeOriginal, else DateTime), ISO 8601; with its offset when the file gives one (OffsetTimeOriginal), else the camera's local time",
          example: '2024-05-01T12:34:56+02:00',
        }),
        gps: z
          .object({ latitude: z.number(), longitude: z.number() })
          .nullable()
          .optional()
          .openapi({ description: 'Only with metadata=keep: the position in degrees (null when the file has none)' }),
      })
      .nullable()
      .openapi({ description: 'A summary of the EXIF; null when the file has none' }),
    dominant_color: z
      .string()
      .regex(/^#[0-9a-f]{6}$/)
      .nullable()
      .openapi({
        description:
          'The most common colour of the picture (not its average); null when every pixel is transparent, or when the picture cannot be previewed within the memory budget',
        example: '#3a5f8c',
      }),
    thumbhash: z.string().nullable().openapi({
      description:
        'ThumbHash of the picture (base64, at most 40 bytes decoded): a blurred placeholder with its aspect ratio and average colour; null when the picture cannot be previewed within the memory budget',
      example: '1QcSHQRnh493V4dIh4eXh1h4kJUI',
    }),
  })
  .openapi('ImageInfo');

// Compile-time: the service's answer fits the documented schema.
const _fits: z.input<typeof ImageInfoSchema> = {} as ImageInfo;
void _fits;
