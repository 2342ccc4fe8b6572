// The OpenAPI description of POST /api/v1/compress. The route reads its multipart body itself (to cap
// it while streaming), so the description is registered on its own, from the same part schema.
import type { RouteConfig } from '@hono/zod-openapi';
import { CompressParts } from './compress-schema.ts';
import { ImageInfoSchema } from './info-schema.ts';
import { IMAGE_SECURITY, RATE_HEADERS, errorResponses } from './schemas.ts';

/** A string response header's description. */
export const header = (description: string) => ({ schema: { type: 'string' as const }, description });
const binary = { schema: { type: 'string' as const, format: 'binary' } };

/**
 * The 200 of /compress and of an image URL: the image, in the format it was written in, with these headers;
 * or with format=json (f=json), its description.
 */
export const imageResponse = (headers: Record<string, ReturnType<typeof header>>) => ({
  description: 'The compressed image; with format=json (f=json), the description of the image (ImageInfo)',
  content: {
    'image/jpeg': binary,
    'image/png': binary,
    'image/webp': binary,
    'image/avif': binary,
    'image/jxl': binary,
    'application/json': { schema: ImageInfoSchema },
  },
  headers: { ...RATE_HEADERS, ...headers },
});

export const compressDoc: RouteConfig = {
  method: 'post',
  path: '/api/v1/compress',
  summary: 'Compress an image: multipart upload in, the compressed image out, sizes in headers',
  description:
    'Decodes the upload (JPEG, PNG, WebP, GIF, AVIF or HEIC where the operator has enabled it, detected from its bytes; of an animation, the first frame unless it is written as animated WebP), applies its orientation (EXIF; in AVIF and HEIC its irot/imir), resizes within width/height ' +
    '(never upscaling), and encodes to `format`: JPEG (our streaming libjpeg-turbo engine), lossless optimised PNG (oxipng), WebP, or AVIF (4:2:0, libavif over libaom). ' +
    'Every input is decoded, resized and encoded in rows, so what bounds a request is the memory budget, estimated from the header ' +
    'before decoding: a request that could never fit is 422 image_too_large naming the largest width that would. Metadata is ' +
    'stripped except the ICC profile (metadata=keep keeps EXIF and XMP, orientation reset to 1); an HDR gain map (Ultra HDR, ISO 21496-1) is ' +
    'image data, kept in JPEG and AVIF output, put through the same resize and transformation (see X-Gain-Map); transparency becomes white in JPEG ' +
    'output. When a JPEG output is not smaller than a same-size JPEG input (no target_kb), it is replaced by a lossless rewrite ' +
    '(coefficients copied, metadata stripped, orientation applied losslessly, Huffman optimised): the input bytes are never returned ' +
    'as they are; a transformed image (fit other than scale-down, rotate, flip, background) is always the transformed image. ' +
    "Transformations (Cloudflare Images' names): EXIF orientation, then flip, then rotate, then the fit into width × height " +
    "(the output's axes, multiplied by dpr), the crop placed by gravity, the padding filled with background. " +
    "One compression of the account's month (all its keys together) is used only by a 200. " +
    'format=json answers the description of the image instead (ImageInfo: upright size, format, orientation, alpha, bit depth, ICC, ' +
    'HDR, frames, an EXIF summary with GPS only under metadata=keep, dominant colour, ThumbHash), encoding nothing; it uses one compression too.',
  tags: ['Image API'],
  security: IMAGE_SECURITY,
  request: { body: { required: true, content: { 'multipart/form-data': { schema: CompressParts } } } },
  responses: {
    200: imageResponse({
      'Content-Disposition': header('inline; filename="<original stem>.<jpg|png|webp|avif>"'),
      'X-Original-Size': header('Bytes uploaded (the image part)'),
      'X-Compressed-Size': header('Bytes of the body'),
      'X-Savings-Percent': header(
        '(original − compressed) ÷ original × 100, one decimal; negative when a conversion grew the file',
      ),
      'X-Image-Width': header('Output width in pixels'),
      'X-Image-Height': header('Output height in pixels'),
      'X-Quality': header(
        "The quality used (the one found, with target_kb; the palette's measured quality with palette=true), or `lossless` when no quality was used: PNG without a palette, lossless WebP, a never-bigger lossless rewrite",
      ),
      'X-Encoder-Quality': header(
        "The number the encoder was given for X-Quality, on its own scale: `quality` means the same in every lossy format (q gives about the SSIMULACRA2 our JPEG reaches at q), so WebP's and AVIF's encoders get their own number for it (libwebp's 0–100, libavif's 0–100); JPEG's is X-Quality itself, as is a palette's; `lossless` when X-Quality is",
      ),
      'X-Target-Reached': header(
        'With target_kb: true when the output fits the target, false when even quality 1 does not',
      ),
      'X-Frames': header(
        'GIF, AVIF and animated WebP input only: the frames written / the frames the input has, e.g. 1/24, or 24/24 for an animation written as animated WebP (anim)',
      ),
      'X-Crop-Box': header(
        'When the image was cropped (fit=cover or crop): x,y,width,height of the kept box in upright source pixels',
      ),
      'X-Gravity': header(
        'With X-Crop-Box: the gravity that placed the crop (center, a side, a corner, XxY, auto, or face; gravity=face that found no face says auto, gravity=auto that fell back to the centre says center)',
      ),
      'X-Crop-Confidence': header(
        "With gravity=auto or face and a crop: how sure the smart crop was, 0.00–1.00 (face: the faces' scores; no face found: half the saliency's; 0.00 when it fell back to the centre)",
      ),
      'X-Gain-Map': header(
        'Only when the upload had an HDR gain map (Ultra HDR or ISO 21496-1 JPEG): `kept` when the output carries it (the map put through the orientation, resize and transformation of the picture: JPEG output after it in an MPF file, AVIF output as an ISO 21496-1 tmap item), `dropped` when it does not (PNG, WebP and JPEG XL output; in AVIF a map whose parameters (its ISO 21496-1 block, else its hdrgm XMP) cannot be read or are out of range, or describe an HDR base picture; a map the MPF index does not lead to; a map that would not fit the memory budget)',
      ),
      'Server-Timing': header('decode, resize, encode (desc: number of encodes) and total, in ms'),
    }),
    ...errorResponses(
      'bad_request',
      'unauthorized',
      'forbidden',
      'plan_upgrade_required',
      'request_timeout',
      'payload_too_large',
      'unsupported_media_type',
      'unprocessable_image',
      'image_too_large',
      'rate_limit_exceeded',
      'quota_exceeded',
      'overloaded',
    ),
  },
};
