/*
 * The HEIC decoder: libheif's parser over libde265, for HEIC/HEIF input, in a module of its own (both are
 * LGPL-3+: this .wasm is replaceable on its own). The file is parsed whole (it is in memory); the picture
 * is then decoded one tile (a grid cell; a picture that is not a grid is one tile) per sr_heicdec_tile
 * call, so the caller gives way between them, into a band of 8-bit RGBA as wide as the coded picture and
 * one tile high: memory grows with the width and the tile's height, never with the picture's height.
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

/* The band: the rows of the tile row decoded last, width × 4 bytes of RGBA each (sr_heicdec_stride apart),
 * as many as a tile is high (fewer in the last tile row). */
const uint8_t *sr_heicdec_band(sr_heicdec *d) { return d->rows; }
int sr_heicdec_stride(sr_heicdec *d) { return d->stride; }

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
  if (d->colour == SR_COLOUR_TO_SRGB && !d->hdr) {
    d->hdr = malloc(sizeof *d->hdr);
    d->linear = malloc(sizeof(float) << bits);
    if (!d->hdr || !d->linear) {
      heif_image_release(img);
      snprintf(d->message, sizeof d->message, "out of memory for the colour conversion");
      return -1;
    }
    sr_hdr_init(d->hdr, d->primaries, d->transfer, bits, d->linear);
  }
  if (d->hdr && d->hdr->max_code != (1u << bits) - 1) {
    heif_image_release(img);
    snprintf(d->message, sizeof d->message, "its tiles differ in depth");
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
    return 0;
  }
  heif_image_release(img);
  d->rows = d->band;
  d->stride = (int)d->width * 4;
  return 0;
}
