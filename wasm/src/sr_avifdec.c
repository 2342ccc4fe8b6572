/*
 * The AVIF decoder: libavif's parser over dav1d, for AVIF input. The file is parsed whole (it is in
 * memory), then decoded one AV1 item (a grid cell, or the alpha item) per sr_avifdec_step call, so the
 * caller gives way between them; inside an item dav1d may suspend the step at the end of every superblock
 * row (patches/dav1d/, srw_give_way by Asyncify: build-avifdec.sh). The picture stays as
 * dav1d wrote it (YUV at 8 or 10/12 bits, a grid's cells stitched by libavif into one YUV image) and is
 * turned into 8-bit RGBA rows a band at a time (sr_avifdec_rows), so no RGBA frame is ever held.
 *
 * Colour: the pixels are passed through when the file's ICC profile (carried to the output by the
 * caller) or its nclx says sRGB/BT.709 or Display P3 (the caller attaches a Display P3 profile); BT.2020
 * primaries and PQ or HLG transfer (HDR) are converted to sRGB here, HDR tone-mapped on luminance
 * (SR_TONE_* below; docs/image-engine.md says which method). Any other nclx is refused with a message,
 * never reinterpreted. More than 8 bits are reduced by libavif's conversion, with rounding.
 *
 * Orientation and clean aperture: the rows are those of the clean aperture (`clap`), unrotated; the
 * caller turns them upright from irot/imir (read from the container by the caller; SR_INFO_TRANSFORMS
 * says what libavif read, to check them against: in AVIF the boxes decide the orientation, an EXIF
 * orientation is informational only).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avif/avif.h"
#include "avif/internal.h"

/* What sr_avifdec_info answers. */
enum {
  SR_INFO_WIDTH = 0,       /* the clean aperture's width: the rows' width */
  SR_INFO_HEIGHT = 1,
  SR_INFO_DEPTH = 2,       /* 8, 10 or 12 */
  SR_INFO_YUV_FORMAT = 3,  /* avifPixelFormat: 1 4:4:4, 2 4:2:2, 3 4:2:0, 4 monochrome */
  SR_INFO_ALPHA = 4,
  SR_INFO_FRAMES = 5,      /* images in a sequence; 1 for a still */
  SR_INFO_TRANSFORMS = 6,  /* irot angle + 1 in bits 0–2 (0: none), imir 8 (+16 for axis 1) */
  SR_INFO_PRIMARIES = 7,
  SR_INFO_TRANSFER = 8,
  SR_INFO_MATRIX = 9,
  SR_INFO_COLOUR = 10,     /* SR_COLOUR_* */
  SR_INFO_ICC_SIZE = 11,
  SR_INFO_EXIF_SIZE = 12,
  SR_INFO_XMP_SIZE = 13,
  SR_INFO_CODED_WIDTH = 14, /* the decoded picture before the clean aperture */
  SR_INFO_CODED_HEIGHT = 15,
  SR_INFO_REPETITIONS = 16, /* a sequence's repetitionCount: -1 for ever, -2 unknown (no edit list) */
  SR_INFO_DURATION_MS = 17, /* the image last decoded: its display time, in ms (0 for a still) */
};

/* How the colours reach the output. */
enum {
  SR_COLOUR_AS_IS = 0,   /* sRGB/BT.709 or the file's ICC profile: pixels passed through */
  SR_COLOUR_P3 = 1,      /* Display P3 by nclx: pixels passed through, the caller attaches a P3 profile */
  SR_COLOUR_TO_SRGB = 2, /* BT.2020 primaries or HDR: converted to sRGB here */
};

/* HDR tone mapping: the input's luminance in nits, scaled so that BT.2408's reference white (203 nits)
 * is the output's white, then compressed by the extended Reinhard curve L(1 + L/Lw²)/(1 + L) with Lw the
 * assumed peak (1000 nits, BT.2408's HLG nominal peak and a common PQ mastering peak) over 203: the peak
 * maps to white, reference white to 0.52 of it in linear light (sRGB 191); hue is kept (RGB scaled alike). */
#define SR_TONE_REFERENCE_WHITE 203.0f
#define SR_TONE_PEAK 1000.0f
/* HLG's system gamma at a 1000-nit display (BT.2100 Table 5). */
#define SR_HLG_GAMMA 1.2f

typedef struct sr_avifdec {
  avifDecoder *decoder;
  avifIO io;
  const uint8_t *data;
  size_t size;
  int gated;       /* after the parse: each sample read takes a grant */
  int grants;      /* sample reads left in this step */
  avifCropRect crop;
  int colour;
  uint8_t *scratch; /* one band converted by libavif, before cropping (and tone mapping) */
  size_t scratch_size;
  char message[256];
} sr_avifdec;

static void set_message(sr_avifdec *d, const char *what, avifResult r) {
  const char *diag = d->decoder ? d->decoder->diag.error : "";
  if (diag && diag[0])
    snprintf(d->message, sizeof d->message, "%s: %s (%s)", what, avifResultToString(r), diag);
  else
    snprintf(d->message, sizeof d->message, "%s: %s", what, avifResultToString(r));
}

/* libavif reads through this: the file is in memory and stays there (persistent). After the parse, a
 * read is granted only while the step has grants left, so each step decodes one item (libavif's
 * incremental decoding resumes where it stopped). */
static avifResult io_read(struct avifIO *io, uint32_t flags, uint64_t offset, size_t size, avifROData *out) {
  sr_avifdec *d = (sr_avifdec *)io->data;
  if (flags) return AVIF_RESULT_IO_ERROR;
  if (offset > d->size) return AVIF_RESULT_IO_ERROR;
  if (d->gated) {
    if (d->grants <= 0) return AVIF_RESULT_WAITING_ON_IO;
    d->grants--;
  }
  uint64_t left = d->size - offset;
  out->data = d->data + offset;
  out->size = size > left ? (size_t)left : size;
  return AVIF_RESULT_OK;
}

static void io_destroy(struct avifIO *io) { (void)io; }

void sr_avifdec_destroy(sr_avifdec *d) {
  if (!d) return;
  if (d->decoder) avifDecoderDestroy(d->decoder);
  free(d->scratch);
  free(d);
}

/* A decoder refusing pictures of more than max_pixels (the service's limit, also checked before). */
sr_avifdec *sr_avifdec_create(uint32_t max_pixels) {
  sr_avifdec *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->decoder = avifDecoderCreate();
  if (!d->decoder) {
    free(d);
    return NULL;
  }
  avifDecoder *dec = d->decoder;
  dec->maxThreads = 1;
  /* As browsers read AVIF: files from older writers without pixi, alpha ispe or a valid clap still open. */
  dec->strictFlags = AVIF_STRICT_DISABLED;
  dec->allowIncremental = AVIF_TRUE;
  dec->imageSizeLimit = max_pixels;
  dec->ignoreExif = AVIF_FALSE;
  dec->ignoreXMP = AVIF_FALSE;
  /* The primary item's colour and alpha only: no gain map. */
  dec->imageContentToDecode = AVIF_IMAGE_CONTENT_COLOR_AND_ALPHA;
  d->io.read = io_read;
  d->io.destroy = io_destroy;
  d->io.persistent = AVIF_TRUE;
  d->io.data = d;
  return d;
}

const char *sr_avifdec_message(sr_avifdec *d) { return d->message; }

static int colour_handling(sr_avifdec *d, const avifImage *im) {
  if (im->icc.size > 0) return SR_COLOUR_AS_IS;
  int cp = im->colorPrimaries, tc = im->transferCharacteristics;
  int sdr_tc = tc == AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED || tc == AVIF_TRANSFER_CHARACTERISTICS_BT709 ||
               tc == AVIF_TRANSFER_CHARACTERISTICS_BT601 || tc == AVIF_TRANSFER_CHARACTERISTICS_SRGB ||
               tc == AVIF_TRANSFER_CHARACTERISTICS_BT2020_10BIT || tc == AVIF_TRANSFER_CHARACTERISTICS_BT2020_12BIT;
  int hdr_tc = tc == AVIF_TRANSFER_CHARACTERISTICS_PQ || tc == AVIF_TRANSFER_CHARACTERISTICS_HLG;
  int srgb_cp = cp == AVIF_COLOR_PRIMARIES_BT709 || cp == AVIF_COLOR_PRIMARIES_UNSPECIFIED;
  if (!sdr_tc && !hdr_tc) {
    snprintf(d->message, sizeof d->message, "its transfer characteristics (nclx %d) are not supported", tc);
    return -1;
  }
  if (cp != AVIF_COLOR_PRIMARIES_BT709 && cp != AVIF_COLOR_PRIMARIES_UNSPECIFIED && cp != AVIF_COLOR_PRIMARIES_BT2020 &&
      cp != AVIF_COLOR_PRIMARIES_SMPTE432) {
    snprintf(d->message, sizeof d->message, "its colour primaries (nclx %d) are not supported", cp);
    return -1;
  }
  if (hdr_tc || cp == AVIF_COLOR_PRIMARIES_BT2020) return SR_COLOUR_TO_SRGB;
  if (cp == AVIF_COLOR_PRIMARIES_SMPTE432) return SR_COLOUR_P3;
  return srgb_cp ? SR_COLOUR_AS_IS : SR_COLOUR_TO_SRGB;
}

/* Parses the file at data (size bytes, kept by the caller until destroy). 0, or -1 with a message;
 * -2 when the file is well formed but not supported (its colour). */
int sr_avifdec_parse(sr_avifdec *d, const uint8_t *data, uint32_t size) {
  d->data = data;
  d->size = size;
  d->io.sizeHint = size;
  avifDecoderSetIO(d->decoder, &d->io);
  avifResult r = avifDecoderParse(d->decoder);
  if (r != AVIF_RESULT_OK) {
    set_message(d, "parse", r);
    return -1;
  }
  const avifImage *im = d->decoder->image;
  d->crop = (avifCropRect){0, 0, im->width, im->height};
  if (im->transformFlags & AVIF_TRANSFORM_CLAP) {
    avifCropRect rect;
    avifDiagnostics diag;
    avifDiagnosticsClearError(&diag);
    /* An invalid clap is ignored, as browsers do: the whole picture is shown. */
    if (avifCropRectFromCleanApertureBox(&rect, &im->clap, im->width, im->height, &diag)) d->crop = rect;
  }
  d->colour = colour_handling(d, im);
  if (d->colour < 0) return -2;
  d->gated = 1;
  return 0;
}

int sr_avifdec_info(sr_avifdec *d, int what) {
  const avifImage *im = d->decoder->image;
  switch (what) {
  case SR_INFO_WIDTH: return (int)d->crop.width;
  case SR_INFO_HEIGHT: return (int)d->crop.height;
  case SR_INFO_DEPTH: return (int)im->depth;
  case SR_INFO_YUV_FORMAT: return (int)im->yuvFormat;
  case SR_INFO_ALPHA: return d->decoder->alphaPresent ? 1 : 0;
  case SR_INFO_FRAMES: return d->decoder->imageCount;
  case SR_INFO_TRANSFORMS: return (int)((im->transformFlags & AVIF_TRANSFORM_IROT ? im->irot.angle + 1 : 0) | (im->transformFlags & AVIF_TRANSFORM_IMIR ? 8 + im->imir.axis * 16 : 0));
  case SR_INFO_PRIMARIES: return im->colorPrimaries;
  case SR_INFO_TRANSFER: return im->transferCharacteristics;
  case SR_INFO_MATRIX: return im->matrixCoefficients;
  case SR_INFO_COLOUR: return d->colour;
  case SR_INFO_ICC_SIZE: return (int)im->icc.size;
  case SR_INFO_EXIF_SIZE: return (int)im->exif.size;
  case SR_INFO_XMP_SIZE: return (int)im->xmp.size;
  case SR_INFO_CODED_WIDTH: return (int)im->width;
  case SR_INFO_CODED_HEIGHT: return (int)im->height;
  case SR_INFO_REPETITIONS: return d->decoder->repetitionCount;
  case SR_INFO_DURATION_MS: {
    double ms = d->decoder->imageTiming.duration * 1000.0 + 0.5;
    return ms < 0 ? 0 : ms > 2147483647.0 ? 2147483647 : (int)ms;
  }
  default: return -1;
  }
}

/* Display P3 by nclx converted to sRGB in the rows rather than passed through: for an output that
 * cannot carry the P3 profile (animated WebP). The colour it answers (SR_COLOUR_*). */
int sr_avifdec_to_srgb(sr_avifdec *d) {
  if (d->colour == SR_COLOUR_P3) d->colour = SR_COLOUR_TO_SRGB;
  return d->colour;
}

const uint8_t *sr_avifdec_icc(sr_avifdec *d) { return d->decoder->image->icc.data; }
const uint8_t *sr_avifdec_exif(sr_avifdec *d) { return d->decoder->image->exif.data; }
const uint8_t *sr_avifdec_xmp(sr_avifdec *d) { return d->decoder->image->xmp.data; }

/* Decodes the next AV1 item of the image being decoded: 1 while items are left, 0 once the picture is
 * whole, -1 with a message. Called again after a 0, it goes on with a sequence's next image (libavif's
 * avifDecoderNextImage: the same call path, so the same Asyncify list), whose rows then replace the
 * previous image's. */
int sr_avifdec_step(sr_avifdec *d) {
  d->grants = 1;
  avifResult r = avifDecoderNextImage(d->decoder);
  if (r == AVIF_RESULT_WAITING_ON_IO) return 1;
  if (r != AVIF_RESULT_OK) {
    set_message(d, "decode", r);
    return -1;
  }
  return 0;
}

/* ---- HDR and wide-gamut conversion to sRGB */

static float pq_eotf(float e) { /* SMPTE ST 2084: code value 0–1 to nits */
  const float m1 = 2610.0f / 16384, m2 = 2523.0f / 4096 * 128, c1 = 3424.0f / 4096, c2 = 2413.0f / 4096 * 32,
              c3 = 2392.0f / 4096 * 32;
  float p = powf(e, 1 / m2);
  float num = p - c1;
  if (num < 0) num = 0;
  return 10000.0f * powf(num / (c2 - c3 * p), 1 / m1);
}

static float hlg_inverse_oetf(float e) { /* BT.2100: code value to scene light 0–1 */
  const float a = 0.17883277f, b = 0.28466892f, c = 0.55991073f;
  return e <= 0.5f ? e * e / 3 : (expf((e - c) / a) + b) / 12;
}

static float sdr_eotf(float e) { /* BT.709 family and sRGB, decoded as sRGB (the output's curve) */
  return e <= 0.04045f ? e / 12.92f : powf((e + 0.055f) / 1.055f, 2.4f);
}

static uint8_t srgb_encode(float v) {
  if (!(v > 0)) return 0;
  if (v >= 1) return 255;
  float e = v <= 0.0031308f ? v * 12.92f : 1.055f * powf(v, 1 / 2.4f) - 0.055f;
  return (uint8_t)(e * 255 + 0.5f);
}

/* Linear BT.2020 to linear BT.709 (BT.2087). */
static const float BT2020_TO_709[9] = {1.6605f, -0.5876f, -0.0728f, -0.1246f, 1.1329f, -0.0083f, -0.0182f, -0.1006f, 1.1187f};
/* Linear Display P3 to linear sRGB. */
static const float P3_TO_709[9] = {1.2249f, -0.2247f, 0.0f, -0.0420f, 1.0419f, 0.0f, -0.0197f, -0.0786f, 1.0979f};

/* One row of 16-bit RGB(A) (0–65535) to 8-bit sRGB, in place into out. */
static void to_srgb_row(const sr_avifdec *d, const uint16_t *in, uint8_t *out, uint32_t width, uint32_t channels) {
  const avifImage *im = d->decoder->image;
  int tc = im->transferCharacteristics, cp = im->colorPrimaries;
  const float *m = cp == AVIF_COLOR_PRIMARIES_BT2020 ? BT2020_TO_709 : cp == AVIF_COLOR_PRIMARIES_SMPTE432 ? P3_TO_709 : NULL;
  /* Luminance weights of the input's primaries. */
  float wr = 0.2627f, wg = 0.6780f, wb = 0.0593f;
  if (cp != AVIF_COLOR_PRIMARIES_BT2020) wr = 0.2126f, wg = 0.7152f, wb = 0.0722f;
  const float lw = SR_TONE_PEAK / SR_TONE_REFERENCE_WHITE;
  for (uint32_t x = 0; x < width; x++) {
    const uint16_t *p = in + x * channels;
    float rgb[3];
    for (int c = 0; c < 3; c++) {
      float e = p[c] / 65535.0f;
      if (tc == AVIF_TRANSFER_CHARACTERISTICS_PQ) rgb[c] = pq_eotf(e) / SR_TONE_REFERENCE_WHITE;
      else if (tc == AVIF_TRANSFER_CHARACTERISTICS_HLG) rgb[c] = hlg_inverse_oetf(e);
      else rgb[c] = sdr_eotf(e);
    }
    if (tc == AVIF_TRANSFER_CHARACTERISTICS_HLG) {
      /* BT.2100's OOTF for a 1000-nit display, then to reference-white units. */
      float ys = wr * rgb[0] + wg * rgb[1] + wb * rgb[2];
      float k = ys > 0 ? powf(ys, SR_HLG_GAMMA - 1) * SR_TONE_PEAK / SR_TONE_REFERENCE_WHITE : 0;
      for (int c = 0; c < 3; c++) rgb[c] *= k;
    }
    if (tc == AVIF_TRANSFER_CHARACTERISTICS_PQ || tc == AVIF_TRANSFER_CHARACTERISTICS_HLG) {
      float l = wr * rgb[0] + wg * rgb[1] + wb * rgb[2];
      if (l > 0) {
        float mapped = l * (1 + l / (lw * lw)) / (1 + l);
        for (int c = 0; c < 3; c++) rgb[c] *= mapped / l;
      }
    }
    float o[3] = {rgb[0], rgb[1], rgb[2]};
    if (m)
      for (int c = 0; c < 3; c++) o[c] = m[c * 3] * rgb[0] + m[c * 3 + 1] * rgb[1] + m[c * 3 + 2] * rgb[2];
    uint8_t *q = out + x * channels;
    for (int c = 0; c < 3; c++) q[c] = srgb_encode(o[c]);
    if (channels == 4) q[3] = (uint8_t)((p[3] * 255u + 32767u) / 65535u);
  }
}

/* Rows y … y+n-1 of the clean aperture as 8-bit RGB (channels 3) or RGBA (4), width × channels bytes
 * each, into out. 0, or -1 with a message. */
int sr_avifdec_rows(sr_avifdec *d, uint8_t *out, uint32_t y, uint32_t n, uint32_t channels) {
  const avifImage *im = d->decoder->image;
  if ((channels != 3 && channels != 4) || y + n > d->crop.height || n == 0) {
    snprintf(d->message, sizeof d->message, "rows out of range");
    return -1;
  }
  avifPixelFormatInfo info;
  avifGetPixelFormatInfo(im->yuvFormat, &info);
  /* A view must start on a chroma sample: widen it left and up to even, and crop that off after. */
  uint32_t x0 = d->crop.x, y0 = d->crop.y + y;
  uint32_t xa = info.monochrome ? x0 : x0 & ~(uint32_t)info.chromaShiftX;
  uint32_t ya = info.monochrome ? y0 : y0 & ~(uint32_t)info.chromaShiftY;
  avifCropRect rect = {xa, ya, x0 + d->crop.width - xa, y0 + n - ya};
  int wide = d->colour == SR_COLOUR_TO_SRGB;
  size_t pixel = (size_t)channels * (wide ? 2 : 1);
  size_t need = (size_t)rect.width * rect.height * pixel;
  if (need > d->scratch_size) {
    free(d->scratch);
    d->scratch = malloc(need);
    d->scratch_size = d->scratch ? need : 0;
    if (!d->scratch) {
      snprintf(d->message, sizeof d->message, "out of memory for the rows");
      return -1;
    }
  }
  avifImage *view = avifImageCreateEmpty();
  if (!view) {
    snprintf(d->message, sizeof d->message, "out of memory for the rows");
    return -1;
  }
  avifResult r = avifImageSetViewRect(view, im, &rect);
  avifRGBImage rgb;
  if (r == AVIF_RESULT_OK) {
    avifRGBImageSetDefaults(&rgb, view);
    rgb.format = channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = wide ? 16 : 8;
    rgb.pixels = d->scratch;
    rgb.rowBytes = (uint32_t)(rect.width * pixel);
    r = avifImageYUVToRGB(view, &rgb);
  }
  avifImageDestroy(view);
  if (r != AVIF_RESULT_OK) {
    set_message(d, "colour conversion", r);
    return -1;
  }
  size_t dx = x0 - xa, dy = y0 - ya;
  size_t row_out = (size_t)d->crop.width * channels;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *src = d->scratch + (dy + i) * rect.width * pixel + dx * pixel;
    if (wide)
      to_srgb_row(d, (const uint16_t *)src, out + i * row_out, d->crop.width, channels);
    else
      memmove(out + i * row_out, src, row_out);
  }
  return 0;
}
