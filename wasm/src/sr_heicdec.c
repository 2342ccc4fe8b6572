/*
 * The HEIC decoder: libheif's parser over libde265, for HEIC/HEIF input, in a module of its own (both are
 * LGPL-3+: this .wasm is replaceable on its own). The file is parsed whole (it is in memory); the picture
 * is then decoded one tile (a grid cell; a picture that is not a grid is one tile) per sr_heicdec_tile
 * call, so the caller gives way between them, into a band of 8-bit RGBA as wide as the coded picture and
 * one tile high: memory grows with the width and the tile's height, never with the picture's height.
 *
 * A picture that is not a grid is its one tile, decoded whole by libheif: it is kept as libheif's YCbCr
 * planes (no conversion asked) and each row is converted to RGBA when sr_heicdec_row asks for it, by
 * libheif's own arithmetic (yuv2rgb.cc, below), so the whole picture is never held as RGBA: that is 4 bytes
 * a pixel (6 above 8 bits) a camera's 12 MP picture did not have room for. libheif cannot hand over
 * libde265's planes themselves: its libde265 plugin copies them into its own image before it frees the
 * decoder (plugins/decoder_libde265.cc), with no option to share them.
 *
 * The tiles are decoded as stored (libheif's transformations off): the caller cuts the clean aperture
 * (`clap`) from the band and turns the rows upright from irot/imir, both read from the container by the
 * caller (src/compress/heic-input/), as for AVIF.
 *
 * Colour: passed through when the file carries an ICC profile (which the caller carries to the output)
 * or its nclx says sRGB/BT.709 or Display P3 (the caller attaches a Display P3 profile); BT.2020 primaries
 * and PQ or HLG (HDR) are converted to sRGB here, HDR tone-mapped (sr_hdr.h says how). Any other nclx is
 * refused with a message, never reinterpreted. More than 8 bits: libheif hands the tile at its depth and
 * sr_hdr.h rounds it to 8 with an ordered dither, so gradients do not band.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libheif/heif.h"
#include "sr_hdr.h"

/* What sr_heicdec_info answers. */
enum {
  SR_INFO_WIDTH = 0, /* the coded picture (ispe), before clap and orientation */
  SR_INFO_HEIGHT = 1,
  SR_INFO_COLUMNS = 2, /* tiles across and down, and a tile's size */
  SR_INFO_ROWS = 3,
  SR_INFO_TILE_WIDTH = 4,
  SR_INFO_TILE_HEIGHT = 5,
  SR_INFO_ALPHA = 6,
  SR_INFO_DEPTH = 7,
  SR_INFO_COLOUR = 8,
  SR_INFO_ICC_SIZE = 9,
  SR_INFO_EXIF_SIZE = 10,
  SR_INFO_XMP_SIZE = 11,
  SR_INFO_TRANSFER = 12, /* nclx transfer characteristics (16 PQ, 18 HLG); 2 (unspecified) without nclx */
};

enum {
  SR_COLOUR_AS_IS = 0, /* sRGB/BT.709 or the file's ICC profile */
  SR_COLOUR_P3 = 1,    /* Display P3 by nclx: the caller attaches a P3 profile */
  SR_COLOUR_TO_SRGB = 2, /* BT.2020 primaries or HDR: converted to sRGB here */
};

/*
 * libheif 1.19's YCbCr-to-RGB conversion (color-conversion/yuv2rgb.cc, monochrome.cc, nclx.cc), one row
 * at a time, as libheif's pipeline picks it for the RGBA (8 bits) or RRGGBB(AA) (above 8) this decoder
 * used to ask for: 8-bit 4:2:0 in full range with a matrix other than 0 and 8 by fixed-point integers
 * (Op_YCbCr420_to_RGB32), everything else in floats (Op_YCbCr_to_RGB, Op_YCbCr420_to_RRGGBBaa), chroma
 * from the nearest sample (libheif's bilinear upsampling costs a step more, so its pipeline search never
 * takes it), limited range stretched by its factors, 8-bit monochrome copied. The image's nclx decides
 * (absent: BT.601 in full range); a test compares the two paths' pixels.
 */
typedef struct sr_yuv {
  int bits;      /* bits a sample */
  int mono;      /* no chroma planes */
  int shift_x, shift_y; /* chroma subsampling: 1 when halved */
  int matrix;    /* the image's nclx matrix coefficients (2 without nclx) */
  int full_range;
  int fixed;     /* Op_YCbCr420_to_RGB32's integer path */
  float r_cr, g_cb, g_cr, b_cb;
  int ir_cr, ig_cb, ig_cr, ib_cb; /* the same × 256, rounded */
  const uint8_t *y, *cb, *cr, *a;
  size_t y_stride, cb_stride, cr_stride, a_stride; /* in bytes */
  int alpha_bits;
} sr_yuv;

/* nclx.cc get_colour_primaries: green, blue, red, white (x, y). */
static int sr_primaries(int cp, float p[8]) {
  static const struct { int cp; float p[8]; } table[] = {
      {1, {0.300f, 0.600f, 0.150f, 0.060f, 0.640f, 0.330f, 0.3127f, 0.3290f}},
      {4, {0.21f, 0.71f, 0.14f, 0.08f, 0.67f, 0.33f, 0.310f, 0.316f}},
      {5, {0.29f, 0.60f, 0.15f, 0.06f, 0.64f, 0.33f, 0.3127f, 0.3290f}},
      {6, {0.310f, 0.595f, 0.155f, 0.070f, 0.630f, 0.340f, 0.3127f, 0.3290f}},
      {7, {0.310f, 0.595f, 0.155f, 0.070f, 0.630f, 0.340f, 0.3127f, 0.3290f}},
      {8, {0.243f, 0.692f, 0.145f, 0.049f, 0.681f, 0.319f, 0.310f, 0.316f}},
      {9, {0.170f, 0.797f, 0.131f, 0.046f, 0.708f, 0.292f, 0.3127f, 0.3290f}},
      {10, {0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.333333f, 0.33333f}},
      {11, {0.265f, 0.690f, 0.150f, 0.060f, 0.680f, 0.320f, 0.314f, 0.351f}},
      {12, {0.265f, 0.690f, 0.150f, 0.060f, 0.680f, 0.320f, 0.3127f, 0.3290f}},
      {22, {0.295f, 0.605f, 0.155f, 0.077f, 0.630f, 0.340f, 0.3127f, 0.3290f}},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].cp == cp) {
      memcpy(p, table[i].p, sizeof table[i].p);
      return 1;
    }
  return 0;
}

/* nclx.cc get_Kr_Kb and get_YCbCr_to_RGB_coefficients; BT.601's when the matrix gives none. */
static void sr_coefficients(sr_yuv *c, int matrix, int cp) {
  float kr = 0, kb = 0, p[8];
  if (matrix == 12 || matrix == 13) {
    if (sr_primaries(cp, p)) {
      const float gx = p[0], gy = p[1], bx = p[2], by = p[3], rx = p[4], ry = p[5], wx = p[6], wy = p[7];
      float zr = 1 - (rx + ry), zg = 1 - (gx + gy), zb = 1 - (bx + by), zw = 1 - (wx + wy);
      float denom = wy * (rx * (gy * zb - by * zg) + gx * (by * zr - ry * zb) + bx * (ry * zg - gy * zr));
      if (denom != 0.0f) {
        kr = (ry * (wx * (gy * zb - by * zg) + wy * (bx * zg - gx * zb) + zw * (gx * by - bx * gy))) / denom;
        kb = (by * (wx * (ry * zg - gy * zr) + wy * (gx * zr - rx * zg) + zw * (rx * gy - gx * ry))) / denom;
      }
    }
  } else if (matrix == 1) kr = 0.2126f, kb = 0.0722f;
  else if (matrix == 4) kr = 0.30f, kb = 0.11f;
  else if (matrix == 5 || matrix == 6) kr = 0.299f, kb = 0.114f;
  else if (matrix == 7) kr = 0.212f, kb = 0.087f;
  else if (matrix == 9 || matrix == 10) kr = 0.2627f, kb = 0.0593f;
  if (kb != 0 || kr != 0) {
    c->r_cr = 2 * (-kr + 1);
    c->g_cb = 2 * kb * (-kb + 1) / (kb + kr - 1);
    c->g_cr = 2 * kr * (-kr + 1) / (kb + kr - 1);
    c->b_cb = 2 * (-kb + 1);
  } else {
    c->r_cr = 1.402f, c->g_cb = -0.344136f, c->g_cr = -0.714136f, c->b_cb = 1.772f;
  }
  c->ir_cr = (int)lroundf(256 * c->r_cr);
  c->ig_cb = (int)lroundf(256 * c->g_cb);
  c->ig_cr = (int)lroundf(256 * c->g_cr);
  c->ib_cb = (int)lroundf(256 * c->b_cb);
}

static inline uint8_t sr_clip_u8(int x) { return x < 0 ? 0 : x > 255 ? 255 : (uint8_t)x; }

/* common_utils.h clip_f_u16. */
static inline uint16_t sr_clip_f(float fx, int32_t max) {
  long x = (long)(fx + 0.5f);
  return x < 0 ? 0 : x > max ? (uint16_t)max : (uint16_t)x;
}

/* Row y of the planes: 8-bit RGBA into out8, or (above 8 bits) 16-bit RGB, RGBA with alpha, into out16. */
static void sr_yuv_row(const sr_yuv *c, uint32_t y, uint32_t width, uint8_t *out8, uint16_t *out16) {
  const int wide = c->bits > 8;
  const int32_t max = (1 << c->bits) - 1;
  const int half = 1 << (c->bits - 1);
  const float offset = (float)(16 << (c->bits - 8));
  const uint32_t cy = y >> c->shift_y;
  const uint8_t *py = c->y + y * c->y_stride;
  const uint8_t *pcb = c->mono ? NULL : c->cb + cy * c->cb_stride;
  const uint8_t *pcr = c->mono ? NULL : c->cr + cy * c->cr_stride;
  const uint8_t *pa = c->a ? c->a + y * c->a_stride : NULL;
  const int channels = wide ? (pa ? 4 : 3) : 4;
  for (uint32_t x = 0; x < width; x++) {
    const uint32_t cx = x >> c->shift_x;
    int yv = wide ? ((const uint16_t *)py)[x] : py[x];
    int cb = c->mono ? half : wide ? ((const uint16_t *)pcb)[cx] : pcb[cx];
    int cr = c->mono ? half : wide ? ((const uint16_t *)pcr)[cx] : pcr[cx];
    int r, g, b;
    if (!wide && c->mono) {
      r = g = b = yv;
    } else if (c->fixed) {
      cb -= 128, cr -= 128;
      r = sr_clip_u8(yv + ((c->ir_cr * cr + 128) >> 8));
      g = sr_clip_u8(yv + ((c->ig_cb * cb + c->ig_cr * cr + 128) >> 8));
      b = sr_clip_u8(yv + ((c->ib_cb * cb + 128) >> 8));
    } else if (c->matrix == 0) {
      if (c->full_range) r = cr, g = yv, b = cb;
      else {
        r = sr_clip_f((cr - offset) * 1.1429f, max);
        g = sr_clip_f((yv - offset) * 1.1689f, max);
        b = sr_clip_f((cb - offset) * 1.1429f, max);
      }
    } else if (c->matrix == 8) {
      cb -= half, cr -= half;
      r = sr_clip_u8(yv - cb + cr), g = sr_clip_u8(yv + cb), b = sr_clip_u8(yv - cb - cr);
    } else {
      float fy = (float)yv, fcb = (float)(cb - half), fcr = (float)(cr - half);
      if (!c->full_range) {
        fy = (fy - offset) * 1.1689f;
        fcb = fcb * 1.1429f;
        fcr = fcr * 1.1429f;
      }
      r = sr_clip_f(fy + c->r_cr * fcr, max);
      g = sr_clip_f(fy + c->g_cb * fcb + c->g_cr * fcr, max);
      b = sr_clip_f(fy + c->b_cb * fcb, max);
    }
    if (wide) {
      uint16_t *q = out16 + (size_t)x * channels;
      q[0] = (uint16_t)r, q[1] = (uint16_t)g, q[2] = (uint16_t)b;
      if (pa) q[3] = c->alpha_bits > 8 ? ((const uint16_t *)pa)[x] : (uint16_t)((pa[x] * max + 127) / 255);
    } else {
      uint8_t *q = out8 + (size_t)x * 4;
      q[0] = (uint8_t)r, q[1] = (uint8_t)g, q[2] = (uint8_t)b;
      q[3] = !pa ? 255 : c->alpha_bits > 8 ? (uint8_t)(((const uint16_t *)pa)[x] >> (c->alpha_bits - 8)) : pa[x];
    }
  }
}

typedef struct sr_heicdec {
  struct heif_context *ctx;
  struct heif_image_handle *handle;
  struct heif_image_tiling tiling;
  uint32_t width, height;
  int colour;
  int primaries, transfer; /* nclx, for SR_COLOUR_TO_SRGB */
  int depth;               /* bits a sample (luma): above 8 the tile comes at its depth */
  sr_hdr *hdr;             /* SR_COLOUR_TO_SRGB's tables, made at the first tile */
  float *linear;
  uint8_t *icc, *exif, *xmp;
  size_t icc_size, exif_size, xmp_size;
  uint8_t *band; /* width × tile height × 4 (a grid of more than one column) */
  struct heif_image *whole; /* one column: the tile itself is the band */
  const uint8_t *rows;      /* the band's first row, and the bytes from one row to the next */
  int stride;
  uint32_t band_y; /* the picture's row at the band's first */
  /* Not a grid: the picture as libheif's planes, converted a row at a time into row (RGBA) through
   * row16 (16-bit RGB(A), above 8 bits). */
  struct heif_image *planes;
  sr_yuv yuv;
  uint8_t *row;
  uint16_t *row16;
  char message[256];
} sr_heicdec;

static int fail(sr_heicdec *d, const char *what, struct heif_error e) {
  snprintf(d->message, sizeof d->message, "%s: %s", what, e.message ? e.message : "failed");
  return -1;
}

void sr_heicdec_destroy(sr_heicdec *d) {
  if (!d) return;
  if (d->handle) heif_image_handle_release(d->handle);
  if (d->ctx) heif_context_free(d->ctx);
  free(d->icc);
  free(d->exif);
  free(d->xmp);
  free(d->band);
  if (d->whole) heif_image_release(d->whole);
  if (d->planes) heif_image_release(d->planes);
  free(d->row);
  free(d->row16);
  free(d->hdr);
  free(d->linear);
  free(d);
}

sr_heicdec *sr_heicdec_create(void) { return calloc(1, sizeof(sr_heicdec)); }

const char *sr_heicdec_message(sr_heicdec *d) { return d->message; }

static int colour_handling(sr_heicdec *d) {
  d->primaries = d->transfer = 2; /* unspecified */
  if (d->icc_size > 0) return SR_COLOUR_AS_IS;
  struct heif_color_profile_nclx *nclx = NULL;
  struct heif_error e = heif_image_handle_get_nclx_color_profile(d->handle, &nclx);
  if (e.code != heif_error_Ok || !nclx) return SR_COLOUR_AS_IS;
  int cp = nclx->color_primaries, tc = nclx->transfer_characteristics;
  heif_nclx_color_profile_free(nclx);
  d->primaries = cp;
  d->transfer = tc;
  /* unspecified 2, BT.709 1, BT.601 6, sRGB 13, BT.2020 10/12-bit 14/15: SDR curves shown as sRGB's;
   * PQ 16 and HLG 18: HDR, tone-mapped. */
  int hdr = tc == 16 || tc == 18;
  if (tc != 1 && tc != 2 && tc != 6 && tc != 13 && tc != 14 && tc != 15 && !hdr) {
    snprintf(d->message, sizeof d->message, "its transfer characteristics (nclx %d) are not supported", tc);
    return -1;
  }
  if (cp != 1 && cp != 2 && cp != 9 && cp != 12) {
    snprintf(d->message, sizeof d->message, "its colour primaries (nclx %d) are not supported", cp);
    return -1;
  }
  if (hdr || cp == 9) return SR_COLOUR_TO_SRGB;
  return cp == 12 ? SR_COLOUR_P3 : SR_COLOUR_AS_IS;
}

/* The first metadata block of item type `type` (and content type `content`, when given), copied. */
static void metadata(sr_heicdec *d, const char *type, const char *content, uint8_t **out, size_t *size) {
  heif_item_id ids[8];
  int n = heif_image_handle_get_list_of_metadata_block_IDs(d->handle, type, ids, 8);
  for (int i = 0; i < n; i++) {
    if (content && strcmp(heif_image_handle_get_metadata_content_type(d->handle, ids[i]), content) != 0) continue;
    size_t s = heif_image_handle_get_metadata_size(d->handle, ids[i]);
    uint8_t *buf = s ? malloc(s) : NULL;
    if (!buf) return;
    if (heif_image_handle_get_metadata(d->handle, ids[i], buf).code != heif_error_Ok) {
      free(buf);
      return;
    }
    *out = buf;
    *size = s;
    return;
  }
}

/* Parses the file at data (size bytes, kept by the caller until destroy), refusing a picture or a tile
 * of more than max_pixels. 0, or -1 with a message; -2 when well formed but not supported (its colour). */
int sr_heicdec_parse(sr_heicdec *d, const uint8_t *data, uint32_t size, uint32_t max_pixels) {
  d->ctx = heif_context_alloc();
  if (!d->ctx) {
    snprintf(d->message, sizeof d->message, "out of memory for the decoder");
    return -1;
  }
  heif_context_get_security_limits(d->ctx)->max_image_size_pixels = max_pixels;
  heif_context_set_max_decoding_threads(d->ctx, 0);
  struct heif_error e = heif_context_read_from_memory_without_copy(d->ctx, data, size, NULL);
  if (e.code != heif_error_Ok) return fail(d, "parse", e);
  e = heif_context_get_primary_image_handle(d->ctx, &d->handle);
  if (e.code != heif_error_Ok) return fail(d, "parse", e);
  d->width = (uint32_t)heif_image_handle_get_ispe_width(d->handle);
  d->height = (uint32_t)heif_image_handle_get_ispe_height(d->handle);
  e = heif_image_handle_get_image_tiling(d->handle, 0, &d->tiling);
  if (e.code != heif_error_Ok) return fail(d, "parse", e);
  /* libheif 1.19 answers a picture that is not a grid with its transformed size (irot, clap) even when
   * asked for the stored one: its one tile is the stored picture. */
  if (d->tiling.num_columns == 1 && d->tiling.num_rows == 1) {
    d->tiling.tile_width = d->width;
    d->tiling.tile_height = d->height;
  }
  if (d->width == 0 || d->height == 0 || d->tiling.tile_width == 0 || d->tiling.tile_height == 0 ||
      (uint64_t)d->width * d->height > max_pixels ||
      (uint64_t)d->tiling.tile_width * d->tiling.tile_height > max_pixels) {
    snprintf(d->message, sizeof d->message, "its picture or tile size is out of range");
    return -1;
  }
  size_t icc = heif_image_handle_get_raw_color_profile_size(d->handle);
  if (icc > 0 && (d->icc = malloc(icc)) != NULL) {
    if (heif_image_handle_get_raw_color_profile(d->handle, d->icc).code == heif_error_Ok) d->icc_size = icc;
  }
  metadata(d, "Exif", NULL, &d->exif, &d->exif_size);
  metadata(d, "mime", "application/rdf+xml", &d->xmp, &d->xmp_size);
  d->depth = heif_image_handle_get_luma_bits_per_pixel(d->handle);
  if (d->depth < 8 || d->depth > 16) d->depth = 8;
  d->colour = colour_handling(d);
  return d->colour < 0 ? -2 : 0;
}

int sr_heicdec_info(sr_heicdec *d, int what) {
  switch (what) {
  case SR_INFO_WIDTH: return (int)d->width;
  case SR_INFO_HEIGHT: return (int)d->height;
  case SR_INFO_COLUMNS: return (int)d->tiling.num_columns;
  case SR_INFO_ROWS: return (int)d->tiling.num_rows;
  case SR_INFO_TILE_WIDTH: return (int)d->tiling.tile_width;
  case SR_INFO_TILE_HEIGHT: return (int)d->tiling.tile_height;
  case SR_INFO_ALPHA: return heif_image_handle_has_alpha_channel(d->handle) ? 1 : 0;
  case SR_INFO_DEPTH: return d->depth;
  case SR_INFO_COLOUR: return d->colour;
  case SR_INFO_ICC_SIZE: return (int)d->icc_size;
  case SR_INFO_EXIF_SIZE: return (int)d->exif_size;
  case SR_INFO_XMP_SIZE: return (int)d->xmp_size;
  case SR_INFO_TRANSFER: return d->transfer;
  default: return -1;
  }
}

const uint8_t *sr_heicdec_icc(sr_heicdec *d) { return d->icc; }
const uint8_t *sr_heicdec_exif(sr_heicdec *d) { return d->exif; }
const uint8_t *sr_heicdec_xmp(sr_heicdec *d) { return d->xmp; }

static int sr_prepare_colour(sr_heicdec *d, int bits);

/* Row y of the picture as 8-bit RGBA (width × 4 bytes), valid until the next call: a picture that is not a
 * grid converts it from its planes now; a grid's comes from the band of the tile row decoded last. NULL
 * with a message when y is not there. */
const uint8_t *sr_heicdec_row(sr_heicdec *d, uint32_t y) {
  if (d->planes) {
    if (y >= d->height) {
      snprintf(d->message, sizeof d->message, "row %u is outside the picture", y);
      return NULL;
    }
    const int wide = d->yuv.bits > 8;
    sr_yuv_row(&d->yuv, y, d->width, d->row, d->row16);
    const int channels = wide ? (d->yuv.a ? 4 : 3) : 4;
    if (d->colour == SR_COLOUR_TO_SRGB)
      sr_hdr_row(d->hdr, wide ? (const void *)d->row16 : d->row, wide, channels, d->row, d->width, 0, y);
    else if (wide) sr_reduce_row(d->row16, channels, (1u << d->yuv.bits) - 1, d->row, d->width, 0, y);
    return d->row;
  }
  if (!d->rows || y < d->band_y || y - d->band_y >= d->tiling.tile_height || y >= d->height) {
    snprintf(d->message, sizeof d->message, "row %u is not in the tile row decoded", y);
    return NULL;
  }
  return d->rows + (size_t)(y - d->band_y) * d->stride;
}

/* Not a grid: the picture decoded whole as libheif's planes, which sr_heicdec_row converts a row at a time.
 * 0, or -1 with a message. */
static int sr_decode_planes(sr_heicdec *d, struct heif_decoding_options *options) {
  struct heif_image *img = NULL;
  struct heif_error e =
      heif_image_handle_decode_image_tile(d->handle, &img, heif_colorspace_undefined, heif_chroma_undefined, options, 0, 0);
  if (e.code != heif_error_Ok) return fail(d, "decode", e);
  d->planes = img;
  sr_yuv *c = &d->yuv;
  memset(c, 0, sizeof *c);
  const enum heif_colorspace space = heif_image_get_colorspace(img);
  const enum heif_chroma chroma = heif_image_get_chroma_format(img);
  c->mono = space == heif_colorspace_monochrome;
  const int ok_chroma = c->mono ? chroma == heif_chroma_monochrome
                                : space == heif_colorspace_YCbCr &&
                                      (chroma == heif_chroma_420 || chroma == heif_chroma_422 || chroma == heif_chroma_444);
  c->bits = heif_image_get_bits_per_pixel_range(img, heif_channel_Y);
  const int iw = heif_image_get_width(img, heif_channel_Y), ih = heif_image_get_height(img, heif_channel_Y);
  if (!ok_chroma || c->bits < 8 || c->bits > 16 || iw < 0 || ih < 0 || (uint32_t)iw < d->width ||
      (uint32_t)ih < d->height) {
    snprintf(d->message, sizeof d->message, "the picture decodes to %d×%d at %d bits (colour space %d, chroma %d), not %u×%u",
             iw, ih, c->bits, (int)space, (int)chroma, d->width, d->height);
    return -1;
  }
  c->shift_x = chroma == heif_chroma_420 || chroma == heif_chroma_422;
  c->shift_y = chroma == heif_chroma_420;
  int stride = 0;
  c->y = heif_image_get_plane_readonly(img, heif_channel_Y, &stride);
  c->y_stride = (size_t)stride;
  if (!c->mono) {
    c->cb = heif_image_get_plane_readonly(img, heif_channel_Cb, &stride);
    c->cb_stride = (size_t)stride;
    c->cr = heif_image_get_plane_readonly(img, heif_channel_Cr, &stride);
    c->cr_stride = (size_t)stride;
    const uint32_t cw = (d->width + c->shift_x) >> c->shift_x, ch = (d->height + c->shift_y) >> c->shift_y;
    if (!c->cb || !c->cr || heif_image_get_bits_per_pixel_range(img, heif_channel_Cb) != c->bits ||
        heif_image_get_bits_per_pixel_range(img, heif_channel_Cr) != c->bits ||
        heif_image_get_width(img, heif_channel_Cb) < (int)cw || heif_image_get_height(img, heif_channel_Cb) < (int)ch ||
        heif_image_get_width(img, heif_channel_Cr) < (int)cw || heif_image_get_height(img, heif_channel_Cr) < (int)ch) {
      snprintf(d->message, sizeof d->message, "its chroma planes do not match its luma");
      return -1;
    }
  }
  if (heif_image_has_channel(img, heif_channel_Alpha)) {
    c->a = heif_image_get_plane_readonly(img, heif_channel_Alpha, &stride);
    c->a_stride = (size_t)stride;
    c->alpha_bits = heif_image_get_bits_per_pixel_range(img, heif_channel_Alpha);
    if (!c->a || c->alpha_bits < 8 || c->alpha_bits > 16 || heif_image_get_width(img, heif_channel_Alpha) < (int)d->width ||
        heif_image_get_height(img, heif_channel_Alpha) < (int)d->height) {
      snprintf(d->message, sizeof d->message, "its alpha plane does not match its picture");
      return -1;
    }
  }
  if (!c->y) {
    snprintf(d->message, sizeof d->message, "the picture has no luma plane");
    return -1;
  }
  /* What libheif's conversion reads from the image: its nclx, else BT.601 in full range; its pipeline is
   * chosen on the same values with "unspecified" read as BT.601. */
  struct heif_color_profile_nclx *nclx = NULL;
  int primaries = 2;
  c->matrix = 2;
  c->full_range = 1;
  if (heif_image_get_nclx_color_profile(img, &nclx).code == heif_error_Ok && nclx) {
    c->matrix = nclx->matrix_coefficients;
    primaries = nclx->color_primaries;
    c->full_range = nclx->full_range_flag != 0;
    heif_nclx_color_profile_free(nclx);
  }
  const int chosen = c->matrix == 2 ? 6 : c->matrix;
  if (!c->mono && (chosen == 11 || chosen == 14)) {
    snprintf(d->message, sizeof d->message, "its matrix coefficients (nclx %d) are not supported", chosen);
    return -1;
  }
  sr_coefficients(c, c->matrix, primaries);
  c->fixed = !c->mono && c->bits == 8 && chroma == heif_chroma_420 && chosen != 0 && chosen != 8 && c->full_range;
  if (!d->row) d->row = malloc((size_t)d->width * 4);
  if (!d->row16 && c->bits > 8) d->row16 = malloc((size_t)d->width * 4 * sizeof(uint16_t));
  if (!d->row || (c->bits > 8 && !d->row16)) {
    snprintf(d->message, sizeof d->message, "out of memory for a row");
    return -1;
  }
  return sr_prepare_colour(d, c->bits);
}

/* SR_COLOUR_TO_SRGB's tables, made for the first tile's depth; a later tile of another depth is refused. */
static int sr_prepare_colour(sr_heicdec *d, int bits) {
  if (d->colour == SR_COLOUR_TO_SRGB && !d->hdr) {
    d->hdr = malloc(sizeof *d->hdr);
    d->linear = malloc(sizeof(float) << bits);
    if (!d->hdr || !d->linear) {
      snprintf(d->message, sizeof d->message, "out of memory for the colour conversion");
      return -1;
    }
    sr_hdr_init(d->hdr, d->primaries, d->transfer, bits, d->linear);
  }
  if (d->hdr && d->hdr->max_code != (1u << bits) - 1) {
    snprintf(d->message, sizeof d->message, "its tiles differ in depth");
    return -1;
  }
  return 0;
}

/* Decodes tile (tx, ty) into its place in the band. 0, or -1 with a message. */
int sr_heicdec_tile(sr_heicdec *d, uint32_t tx, uint32_t ty) {
  const uint32_t tw = d->tiling.tile_width, th = d->tiling.tile_height;
  if (tx >= d->tiling.num_columns || ty >= d->tiling.num_rows) {
    snprintf(d->message, sizeof d->message, "tile out of range");
    return -1;
  }
  if (d->whole) {
    heif_image_release(d->whole);
    d->whole = NULL;
  }
  d->rows = NULL;
  /* The caller may read the rows again (a palette PNG's second pass): the picture is decoded again, its
   * planes released first so that the two are never held together. */
  if (d->planes) {
    heif_image_release(d->planes);
    d->planes = NULL;
  }
  if (!d->band && d->tiling.num_columns > 1) {
    d->band = malloc((size_t)d->width * th * 4);
    if (!d->band) {
      snprintf(d->message, sizeof d->message, "out of memory for the band");
      return -1;
    }
  }
  struct heif_decoding_options *options = heif_decoding_options_alloc();
  if (!options) {
    snprintf(d->message, sizeof d->message, "out of memory for the tile");
    return -1;
  }
  options->ignore_transformations = 1;
  if (d->tiling.num_columns == 1 && d->tiling.num_rows == 1) {
    int r = sr_decode_planes(d, options);
    heif_decoding_options_free(options);
    if (r != 0 && d->planes) { /* no row is read from a picture refused */
      heif_image_release(d->planes);
      d->planes = NULL;
    }
    return r;
  }
  /* Above 8 bits the tile comes at its depth (16-bit samples), reduced below with dither; without alpha
   * as RGB: libheif's conversion then makes no alpha plane (its peak: docs/image-engine.md). */
  const int wide = d->depth > 8;
  const int channels = wide && !heif_image_handle_has_alpha_channel(d->handle) ? 3 : 4;
  options->convert_hdr_to_8bit = 0;
  struct heif_image *img = NULL;
  enum heif_chroma chroma = !wide ? heif_chroma_interleaved_RGBA
                            : channels == 3 ? heif_chroma_interleaved_RRGGBB_LE : heif_chroma_interleaved_RRGGBBAA_LE;
  struct heif_error e =
      heif_image_handle_decode_image_tile(d->handle, &img, heif_colorspace_RGB, chroma, options, tx, ty);
  heif_decoding_options_free(options);
  if (e.code != heif_error_Ok) return fail(d, "decode", e);
  int stride = 0;
  uint8_t *src = heif_image_get_plane(img, heif_channel_interleaved, &stride);
  int bits = heif_image_get_bits_per_pixel_range(img, heif_channel_interleaved);
  int iw = heif_image_get_width(img, heif_channel_interleaved);
  int ih = heif_image_get_height(img, heif_channel_interleaved);
  /* The tile's share of the band; a tile smaller than that (a stream saying less than its boxes) is
   * refused rather than leaving rows of an earlier tile in place. */
  uint32_t x0 = tx * tw, y0 = ty * th;
  uint32_t w = d->width - x0 < tw ? d->width - x0 : tw;
  uint32_t h = d->height - y0 < th ? d->height - y0 : th;
  if (!src || iw < 0 || ih < 0 || (uint32_t)iw < w || (uint32_t)ih < h || bits < 8 || bits > 16 ||
      (!wide && bits != 8)) {
    heif_image_release(img);
    snprintf(d->message, sizeof d->message, "a tile decodes to %d×%d at %d bits, not %u×%u", iw, ih, bits, w, h);
    return -1;
  }
  if (sr_prepare_colour(d, bits) != 0) {
    heif_image_release(img);
    return -1;
  }
  /* One column: the band is the tile's own picture, kept until the next tile, 8-bit rows converted in
   * place (an output row is never longer than its input). Else each row goes to its place in the band. */
  const int in_place = d->tiling.num_columns == 1;
  uint8_t *band = in_place ? src : d->band;
  const size_t band_stride = in_place ? (size_t)stride : (size_t)d->width * 4;
  for (uint32_t y = 0; y < h; y++) {
    const uint8_t *in = src + (size_t)y * stride;
    uint8_t *out = band + (size_t)y * band_stride + (in_place ? 0 : (size_t)x0 * 4);
    if (d->colour == SR_COLOUR_TO_SRGB) sr_hdr_row(d->hdr, in, wide, channels, out, w, x0, y0 + y);
    else if (wide) sr_reduce_row((const uint16_t *)in, channels, (1u << bits) - 1, out, w, x0, y0 + y);
    else if (!in_place) memcpy(out, in, (size_t)w * 4);
  }
  if (in_place) {
    d->whole = img;
    d->rows = src;
    d->stride = stride;
    d->band_y = y0;
    return 0;
  }
  heif_image_release(img);
  d->rows = d->band;
  d->stride = (int)d->width * 4;
  d->band_y = y0;
  return 0;
}
