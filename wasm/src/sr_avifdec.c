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
 * primaries and PQ or HLG transfer (HDR) are converted to sRGB here by the HEIC decoder's method
 * (sr_hdr.h: BT.2390's EETF onto 203-nit white, gamut desaturated into sRGB). Any other nclx is refused with a
 * message, never reinterpreted. More than 8 bits are reduced with sr_hdr.h's ordered dither, so a smooth
 * 10-bit gradient does not band.
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
#include "sr_hdr.h"

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
  sr_hdr *hdr;      /* the conversion to sRGB (sr_hdr.h), made at the first row that needs it */
  float *linear;    /* its table of 16-bit code values to linear light */
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
  free(d->hdr);
  free(d->linear);
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

/* The conversion of 16-bit rows (libavif scales every depth to 0–65535) to 8-bit sRGB: sr_hdr.h's tables,
 * built once per picture. 0, or -1 with a message. */
static int make_hdr(sr_avifdec *d) {
  if (d->hdr) return 0;
  d->hdr = malloc(sizeof *d->hdr);
  d->linear = malloc(65536 * sizeof *d->linear);
  if (!d->hdr || !d->linear) {
    snprintf(d->message, sizeof d->message, "out of memory for the colour conversion");
    return -1;
  }
  const avifImage *im = d->decoder->image;
  int cp = im->colorPrimaries == AVIF_COLOR_PRIMARIES_UNSPECIFIED ? AVIF_COLOR_PRIMARIES_BT709 : im->colorPrimaries;
  /* A PQ picture's content light level ('clli': its brightest pixel, MaxCLL) is the peak its tone curve maps
   * to reference white; without one, 1,000 nits (sr_hdr.h). libavif does not read mastering display
   * colour volume ('mdcv'). */
  if (sr_hdr_init_peak(d->hdr, cp, im->transferCharacteristics, 16, d->linear, (float)im->clli.maxCLL) != 0) {
    snprintf(d->message, sizeof d->message, "its colour (nclx %d/%d) cannot be converted", cp, im->transferCharacteristics);
    return -1;
  }
  return 0;
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
  /* Converted or deeper than 8 bits: 16-bit rows from libavif, then sr_hdr.h (converted, or dithered). */
  int convert = d->colour == SR_COLOUR_TO_SRGB;
  int wide = convert || im->depth > 8;
  if (convert && make_hdr(d) != 0) return -1;
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
    uint8_t *src = d->scratch + (dy + i) * rect.width * pixel + dx * pixel;
    if (!wide) {
      memmove(out + i * row_out, src, row_out);
      continue;
    }
    /* 8-bit RGBA written over the row's own 16-bit samples (never wider), then out at its channels. The
     * dither is placed by the pixel's place in the clean aperture. */
    if (convert)
      sr_hdr_row(d->hdr, src, 1, (int)channels, src, d->crop.width, 0, y + i);
    else
      sr_reduce_row((const uint16_t *)src, (int)channels, 65535, src, d->crop.width, 0, y + i);
    uint8_t *o = out + i * row_out;
    for (uint32_t x = 0; x < d->crop.width; x++)
      for (uint32_t c = 0; c < channels; c++) o[x * channels + c] = src[x * 4 + c];
  }
  return 0;
}
