/*
 * The AVIF encoder: RGB(A) rows handed in bands become a 4:2:0 AVIF (libavif over libaom's encoder).
 *
 * The picture is held as YUV 4:2:0 (1.5 bytes a pixel, 2.5 with alpha), never as RGB(A): each band of
 * rows is converted on arrival by libavif's own converter, into a view of the rows it covers. A large
 * picture can be split into a grid of cells (an AVIF grid item): libaom encodes one cell per call
 * (sr_avif_encode_cell) and frees its encoder before the next, so its working memory is that of one cell
 * and the caller can give way to other requests between cells; the YUV of every cell is still held until
 * the end (a size target encodes the picture again), and avifEncoderAddImageGrid writes the file.
 *
 * Bands must start on an even row (4:2:0 pairs rows for chroma), so every band but the last has an
 * even number of rows; cells are even-sized for the same reason. A 4:2:0 grid must also be even-sized
 * as a whole (MIAF; libavif refuses it otherwise), so a grid of an odd width or height is coded one
 * column or row larger, its last pixels repeated, and cropped back by a clean aperture (`clap`) on the
 * grid (see strip_cell_clap).
 *
 * At depth 10 the picture is still held as 8-bit YUV, and each cell is widened to 10-bit samples as it is
 * encoded: libaom's high bit depth path predicts, transforms and filters at 10 bits, which is where the
 * bytes are saved (docs/experiments/avif-and-quality-scale.md: converting the RGB rows to 10-bit YUV
 * instead saved no more), and the picture's memory stays 1.5 bytes a pixel.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avif/avif.h"
#include "avif/internal.h"

#define SR_AVIF_MAX_OPTIONS 8

typedef struct sr_avif {
  uint32_t width, height, channels;
  uint32_t depth;                /* the coded samples' bits: 8, or 10 (each cell widened as it is encoded) */
  uint32_t coded_w, coded_h;     /* width and height rounded up to even for a grid; else the same */
  uint32_t cols, rows;           /* the grid; 1 × 1 is a plain image */
  uint32_t cell_w, cell_h;       /* every cell but the last column's and row's */
  uint32_t next_row;             /* rows received so far */
  avifImage **cells;             /* cols × rows, row-major */
  avifImage **gain_cells;        /* an HDR gain map's cells, one per cell of the picture (sr_avif_gain_map), or NULL */
  avifGainMap *gain;             /* its metadata; each cell's gainMap takes a copy at the end */
  int gain_quality;
  char options[SR_AVIF_MAX_OPTIONS][2][32]; /* libaom's own settings (key, value), for measuring */
  uint32_t option_count;
  avifRWData output;
  struct sr_avif_encode_state *encoding; /* the encode under way, between its steps */
  char message[256];
} sr_avif;

static void free_state(struct sr_avif_encode_state *s);

static uint32_t even_ceil_div(uint32_t n, uint32_t d) {
  uint32_t q = (n + d - 1) / d;
  return (q + 1) & ~1u;
}

static void set_message(sr_avif *a, const char *what, avifResult r) {
  snprintf(a->message, sizeof a->message, "%s: %s", what, avifResultToString(r));
}

/* 0 when r is AVIF_RESULT_OK, else -1 with a message naming the step. */
static int checked(sr_avif *a, const char *what, avifResult r) {
  if (r == AVIF_RESULT_OK) return 0;
  set_message(a, what, r);
  return -1;
}

void sr_avif_destroy(sr_avif *a) {
  if (!a) return;
  if (a->cells) {
    for (uint32_t i = 0; i < a->cols * a->rows; i++) {
      if (a->cells[i]) avifImageDestroy(a->cells[i]);
    }
    free(a->cells);
  }
  if (a->gain_cells) {
    for (uint32_t i = 0; i < a->cols * a->rows; i++) {
      if (a->gain_cells[i]) avifImageDestroy(a->gain_cells[i]);
    }
    free(a->gain_cells);
  }
  if (a->gain) avifGainMapDestroy(a->gain);
  free_state(a->encoding);
  avifRWDataFree(&a->output);
  free(a);
}

/* A picture of width × height with channels 3 (RGB) or 4 (RGBA), split into grid_cols × grid_rows cells
 * (1 × 1: no grid), coded at `depth` bits a sample (8 or 10). NULL when the grid does not fit the picture,
 * the depth is neither, or memory runs out. */
sr_avif *sr_avif_create(uint32_t width, uint32_t height, uint32_t channels, uint32_t grid_cols, uint32_t grid_rows,
                        uint32_t depth) {
  if (!width || !height || (channels != 3 && channels != 4) || !grid_cols || !grid_rows) return NULL;
  if (depth != 8 && depth != 10) return NULL;
  sr_avif *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->width = width;
  a->height = height;
  a->channels = channels;
  a->depth = depth;
  a->cols = grid_cols;
  a->rows = grid_rows;
  const int grid = grid_cols * grid_rows > 1;
  a->coded_w = grid ? width + (width & 1) : width;
  a->coded_h = grid ? height + (height & 1) : height;
  a->cell_w = grid_cols == 1 ? a->coded_w : even_ceil_div(a->coded_w, grid_cols);
  a->cell_h = grid_rows == 1 ? a->coded_h : even_ceil_div(a->coded_h, grid_rows);
  /* Every column and row of cells must hold at least one pixel of the picture. */
  if ((uint64_t)a->cell_w * (grid_cols - 1) >= width || (uint64_t)a->cell_h * (grid_rows - 1) >= height) {
    sr_avif_destroy(a);
    return NULL;
  }
  a->cells = calloc((size_t)grid_cols * grid_rows, sizeof *a->cells);
  if (!a->cells) {
    sr_avif_destroy(a);
    return NULL;
  }
  for (uint32_t r = 0; r < grid_rows; r++) {
    for (uint32_t c = 0; c < grid_cols; c++) {
      uint32_t w = c + 1 < grid_cols ? a->cell_w : a->coded_w - a->cell_w * c;
      uint32_t h = r + 1 < grid_rows ? a->cell_h : a->coded_h - a->cell_h * r;
      avifImage *img = avifImageCreate(w, h, 8, AVIF_PIXEL_FORMAT_YUV420);
      if (!img) {
        sr_avif_destroy(a);
        return NULL;
      }
      /* sRGB in BT.601 full range, as avifenc writes an sRGB PNG. */
      img->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
      img->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
      img->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
      img->yuvRange = AVIF_RANGE_FULL;
      a->cells[r * grid_cols + c] = img;
      if (avifImageAllocatePlanes(img, channels == 4 ? AVIF_PLANES_ALL : AVIF_PLANES_YUV) != AVIF_RESULT_OK) {
        sr_avif_destroy(a);
        return NULL;
      }
    }
  }
  return a;
}

const char *sr_avif_message(const sr_avif *a) { return a->message; }

/* The picture's ICC profile (copied), written as its colour: libavif takes a grid's colour and metadata
 * from its first cell, but it refuses a grid whose cells' CICP values differ, so every cell says
 * "unspecified" for the primaries and transfer the profile now defines (as avifenc does for an input with
 * a profile). 0, or -1 with a message. */
int sr_avif_icc(sr_avif *a, const uint8_t *icc, uint32_t size) {
  if (!size) return 0;
  if (checked(a, "avifImageSetProfileICC", avifImageSetProfileICC(a->cells[0], icc, size))) return -1;
  for (uint32_t i = 0; i < a->cols * a->rows; i++) {
    a->cells[i]->colorPrimaries = AVIF_COLOR_PRIMARIES_UNSPECIFIED;
    a->cells[i]->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED;
  }
  return 0;
}

/* The picture's EXIF (a TIFF header and its IFDs, "Exif\0\0" before it or not), copied and written as an
 * Exif item of the image (of the grid: libavif takes a grid's metadata from its first cell). libavif
 * reads the EXIF orientation into the image's rotation and mirror properties; the rows arrive upright,
 * so those are cleared whatever the tag says (the caller resets it to 1 as well). EXIF without a TIFF
 * header cannot be stored (libavif refuses the encode) and is left out. 0, or -1 with a message. */
int sr_avif_exif(sr_avif *a, const uint8_t *exif, uint32_t size) {
  size_t offset;
  if (!size || avifGetExifTiffHeaderOffset(exif, size, &offset) != AVIF_RESULT_OK) return 0;
  avifResult r = avifImageSetMetadataExif(a->cells[0], exif, size);
  a->cells[0]->transformFlags &= ~(avifTransformFlags)(AVIF_TRANSFORM_IROT | AVIF_TRANSFORM_IMIR);
  return checked(a, "avifImageSetMetadataExif", r);
}

/* The picture's XMP packet, copied and written as an XMP item (on the first cell, as for EXIF). 0, or -1
 * with a message. */
int sr_avif_xmp(sr_avif *a, const uint8_t *xmp, uint32_t size) {
  if (!size) return 0;
  return checked(a, "avifImageSetMetadataXMP", avifImageSetMetadataXMP(a->cells[0], xmp, size));
}

/* A libaom setting by its aomenc name ("tune" = "iq", "deltaq-mode" = "3", ...), applied by the next
 * encode. 0, or -1 when there are too many or a name or value is too long. */
int sr_avif_option(sr_avif *a, const char *key, const char *value) {
  if (a->option_count == SR_AVIF_MAX_OPTIONS || strlen(key) >= 32 || strlen(value) >= 32) return -1;
  strcpy(a->options[a->option_count][0], key);
  strcpy(a->options[a->option_count][1], value);
  a->option_count++;
  return 0;
}

/* An HDR gain map to write beside the picture (ISO 21496-1, as a 'tmap' item; the picture stays the SDR
 * rendition every viewer shows): width × height 8-bit pixels of `channels` 1 or 3 (any size; a quarter of
 * the picture's per side is usual), split into the picture's grid of cells (a grid's gain map is a grid of
 * as many cells), and its metadata `m`, 17 numbers: gain map min, max and gamma per channel (log2, log2,
 * linear), the base and alternate offsets per channel, then the base and alternate HDR headroom (log2).
 * Stored as 4:0:0 (one channel) or 4:4:4 with the identity matrix (three: RGB as is), full range, libavif
 * quality `quality`; encoded cell by cell with the picture's cells. 0, or -1 with a message. */
int sr_avif_gain_map(sr_avif *a, const uint8_t *pixels, uint32_t width, uint32_t height, uint32_t channels,
                     const double *m, int quality) {
  if ((channels != 1 && channels != 3) || !width || !height) {
    snprintf(a->message, sizeof a->message, "a gain map of %u × %u and %u channels", width, height, channels);
    return -1;
  }
  const uint32_t cw = (width + a->cols - 1) / a->cols, ch = (height + a->rows - 1) / a->rows;
  if ((uint64_t)cw * (a->cols - 1) >= width || (uint64_t)ch * (a->rows - 1) >= height) {
    snprintf(a->message, sizeof a->message, "a gain map of %u × %u cannot be split into %u × %u cells", width,
             height, a->cols, a->rows);
    return -1;
  }
  avifGainMap *g = a->gain = avifGainMapCreate();
  a->gain_cells = calloc((size_t)a->cols * a->rows, sizeof *a->gain_cells);
  if (!g || !a->gain_cells) {
    snprintf(a->message, sizeof a->message, "out of memory for the gain map");
    return -1;
  }
  avifBool ok = AVIF_TRUE;
  for (int c = 0; c < 3; c++) {
    ok = ok && avifDoubleToSignedFraction(m[c], &g->gainMapMin[c]);
    ok = ok && avifDoubleToSignedFraction(m[3 + c], &g->gainMapMax[c]);
    ok = ok && avifDoubleToUnsignedFraction(m[6 + c], &g->gainMapGamma[c]);
    ok = ok && avifDoubleToSignedFraction(m[9 + c], &g->baseOffset[c]);
    ok = ok && avifDoubleToSignedFraction(m[12 + c], &g->alternateOffset[c]);
  }
  ok = ok && avifDoubleToUnsignedFraction(m[15], &g->baseHdrHeadroom);
  ok = ok && avifDoubleToUnsignedFraction(m[16], &g->alternateHdrHeadroom);
  if (!ok) {
    snprintf(a->message, sizeof a->message, "a gain map value out of range");
    return -1;
  }
  g->useBaseColorSpace = AVIF_TRUE;
  a->gain_quality = quality;
  for (uint32_t r = 0; r < a->rows; r++) {
    for (uint32_t c = 0; c < a->cols; c++) {
      const uint32_t w = c + 1 < a->cols ? cw : width - cw * c;
      const uint32_t h = r + 1 < a->rows ? ch : height - ch * r;
      avifImage *img = avifImageCreate(w, h, 8, channels == 1 ? AVIF_PIXEL_FORMAT_YUV400 : AVIF_PIXEL_FORMAT_YUV444);
      a->gain_cells[r * a->cols + c] = img;
      if (!img || avifImageAllocatePlanes(img, AVIF_PLANES_YUV) != AVIF_RESULT_OK) {
        snprintf(a->message, sizeof a->message, "out of memory for the gain map");
        return -1;
      }
      /* ISO 21496-1: a gain map has no colour of its own (primaries and transfer 2, unspecified). */
      img->colorPrimaries = AVIF_COLOR_PRIMARIES_UNSPECIFIED;
      img->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_UNSPECIFIED;
      img->matrixCoefficients = channels == 1 ? AVIF_MATRIX_COEFFICIENTS_BT601 : AVIF_MATRIX_COEFFICIENTS_IDENTITY;
      img->yuvRange = AVIF_RANGE_FULL;
      for (uint32_t y = 0; y < h; y++) {
        const uint8_t *src = pixels + ((size_t)(r * ch + y) * width + (size_t)c * cw) * channels;
        uint8_t *plane_y = img->yuvPlanes[AVIF_CHAN_Y] + (size_t)y * img->yuvRowBytes[AVIF_CHAN_Y];
        if (channels == 1) {
          memcpy(plane_y, src, w);
          continue;
        }
        /* The identity matrix's planes are G, B, R (AV1's order for RGB). */
        uint8_t *plane_u = img->yuvPlanes[AVIF_CHAN_U] + (size_t)y * img->yuvRowBytes[AVIF_CHAN_U];
        uint8_t *plane_v = img->yuvPlanes[AVIF_CHAN_V] + (size_t)y * img->yuvRowBytes[AVIF_CHAN_V];
        for (uint32_t x = 0; x < w; x++) {
          plane_y[x] = src[3 * x + 1];
          plane_u[x] = src[3 * x + 2];
          plane_v[x] = src[3 * x];
        }
      }
    }
  }
  return 0;
}

/* Repeats column x - 1 into column x (the padding column of a grid of odd width) over rows y0..y1 of a
 * cell's luma and alpha; its chroma already covers both, converted from the odd-width view. */
static void repeat_column(avifImage *cell, uint32_t x, uint32_t y0, uint32_t y1) {
  for (uint32_t y = y0; y < y1; y++) {
    uint8_t *luma = cell->yuvPlanes[AVIF_CHAN_Y] + (size_t)y * cell->yuvRowBytes[AVIF_CHAN_Y];
    luma[x] = luma[x - 1];
    if (cell->alphaPlane) {
      uint8_t *alpha = cell->alphaPlane + (size_t)y * cell->alphaRowBytes;
      alpha[x] = alpha[x - 1];
    }
  }
}

/* Repeats row y - 1 into row y (the padding row of a grid of odd height) in a cell's luma and alpha. */
static void repeat_row(avifImage *cell, uint32_t y) {
  memcpy(cell->yuvPlanes[AVIF_CHAN_Y] + (size_t)y * cell->yuvRowBytes[AVIF_CHAN_Y],
         cell->yuvPlanes[AVIF_CHAN_Y] + (size_t)(y - 1) * cell->yuvRowBytes[AVIF_CHAN_Y], cell->width);
  if (cell->alphaPlane)
    memcpy(cell->alphaPlane + (size_t)y * cell->alphaRowBytes, cell->alphaPlane + (size_t)(y - 1) * cell->alphaRowBytes,
           cell->width);
}

/* The next `count` rows, tightly packed (width × channels bytes each). 0, or -1 with a message. */
int sr_avif_rows(sr_avif *a, const uint8_t *pixels, uint32_t count) {
  if (count == 0) return 0;
  if (a->next_row & 1) {
    snprintf(a->message, sizeof a->message, "a band after an odd number of rows");
    return -1;
  }
  if (count > a->height - a->next_row) {
    snprintf(a->message, sizeof a->message, "more rows than the picture has");
    return -1;
  }
  const uint32_t stride = a->width * a->channels;
  uint32_t done = 0;
  while (done < count) {
    const uint32_t y = a->next_row + done;
    const uint32_t cell_row = a->cell_h ? y / a->cell_h : 0;
    const uint32_t y_in_cell = y - cell_row * a->cell_h;
    uint32_t n = count - done;
    /* A band that crosses a row of cells is split there (cell heights are even, so both parts start even). */
    const uint32_t left_in_cell = a->cells[cell_row * a->cols]->height - y_in_cell;
    if (n > left_in_cell) n = left_in_cell;
    for (uint32_t c = 0; c < a->cols; c++) {
      avifImage *cell = a->cells[cell_row * a->cols + c];
      /* The picture's own columns of this cell: all of it but a padding column. */
      const uint32_t cols_in_cell = c + 1 < a->cols ? cell->width : a->width - a->cell_w * c;
      avifImage *view = avifImageCreateEmpty();
      if (!view) {
        snprintf(a->message, sizeof a->message, "out of memory");
        return -1;
      }
      const avifCropRect rect = { 0, y_in_cell, cols_in_cell, n };
      avifResult r = avifImageSetViewRect(view, cell, &rect);
      if (r == AVIF_RESULT_OK) {
        avifRGBImage rgb;
        avifRGBImageSetDefaults(&rgb, view);
        rgb.format = a->channels == 4 ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
        rgb.depth = 8;
        rgb.pixels = (uint8_t *)pixels + (size_t)done * stride + (size_t)c * a->cell_w * a->channels;
        rgb.rowBytes = stride;
        r = avifImageRGBToYUV(view, &rgb);
      }
      /* avifImageRGBToYUV marks the planes it writes as the view's own even when they are the cell's
       * (avifImageAllocatePlanes sets the flags before looking), so destroying the view would free
       * the cell's planes, or pointers into their middle. */
      view->imageOwnsYUVPlanes = AVIF_FALSE;
      view->imageOwnsAlphaPlane = AVIF_FALSE;
      avifImageDestroy(view);
      if (checked(a, "avifImageRGBToYUV", r)) return -1;
      if (cols_in_cell < cell->width) repeat_column(cell, cols_in_cell, y_in_cell, y_in_cell + n);
      if (y + n == a->height && a->coded_h > a->height) repeat_row(cell, y_in_cell + n);
    }
    done += n;
  }
  a->next_row += count;
  return 0;
}

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t be16(const uint8_t *p) { return (uint32_t)p[0] << 8 | p[1]; }

/* The child box of type `type` inside [p, end) (after `skip` bytes of the parent's own fields); its
 * contents in [*body, *body_end). 32-bit box sizes only, as libavif writes its meta box. */
static int find_box(const uint8_t *p, const uint8_t *end, const char *type, const uint8_t **body, const uint8_t **body_end) {
  while (end - p >= 8) {
    const uint32_t size = be32(p);
    if (size < 8 || size > (uint32_t)(end - p)) return 0;
    if (!memcmp(p + 4, type, 4)) {
      *body = p + 8;
      *body_end = p + size;
      return 1;
    }
    p += size;
  }
  return 0;
}

/* libavif writes a grid's transformative properties on its cells too (it gives cells the grid's
 * properties), so a clean aperture meant for the whole grid would crop every cell, and decoders
 * assemble garbage. This turns the cells' associations with the `clap` property into "no property"
 * (index 0) in place: the file keeps its size, so no offset moves. Only libavif's own layout is read
 * (ipma version 0 without large indices, infe version 2, as it writes them); 0, or -1 when the layout
 * is not that. */
static int strip_cell_clap(uint8_t *file, size_t size) {
  const uint8_t *end = file + size, *meta, *meta_end, *iinf, *iinf_end, *iprp, *iprp_end, *ipco, *ipco_end, *ipma,
                *ipma_end;
  if (!find_box(file, end, "meta", &meta, &meta_end)) return -1;
  meta += 4; /* FullBox */
  if (!find_box(meta, meta_end, "iinf", &iinf, &iinf_end) || !find_box(meta, meta_end, "iprp", &iprp, &iprp_end) ||
      !find_box(iprp, iprp_end, "ipco", &ipco, &ipco_end) || !find_box(iprp, iprp_end, "ipma", &ipma, &ipma_end))
    return -1;
  /* The clap property's index, counted from 1. */
  uint32_t clap = 0, index = 0;
  for (const uint8_t *p = ipco; ipco_end - p >= 8 && be32(p) >= 8; p += be32(p)) {
    index++;
    if (!memcmp(p + 4, "clap", 4)) clap = index;
  }
  if (!clap || clap > 127) return -1;
  if (iinf[0] != 0 || ipma[0] != 0 || ipma[3] & 1) return -1; /* versions and flags libavif writes */
  const uint8_t *q = ipma + 8, *entries_end = ipma_end;
  for (uint32_t e = be32(ipma + 4); e > 0; e--) {
    if (entries_end - q < 3) return -1;
    const uint32_t item = be16(q), count = q[2];
    if (entries_end - q < 3 + (ptrdiff_t)count) return -1;
    /* The item's type, from its infe entry. */
    int is_grid = 0;
    for (const uint8_t *p = iinf + 6; iinf_end - p >= 20 && be32(p) >= 20; p += be32(p)) {
      if (!memcmp(p + 4, "infe", 4) && p[8] == 2 && be16(p + 12) == item) is_grid = !memcmp(p + 16, "grid", 4);
    }
    for (uint32_t i = 0; i < count; i++) {
      uint8_t *assoc = (uint8_t *)q + 3 + i;
      if (!is_grid && (*assoc & 0x7f) == clap) *assoc = 0;
    }
    q += 3 + count;
  }
  return 0;
}

/* libavif writes each item's pixel information (`pixi`) from the images it was given, which a depth-10
 * encode keeps at 8 bits (sr_avif.c's first comment says why); libaom's payloads are 10-bit, and their
 * `av1C` says so. This sets every `pixi` property's bits per channel to `depth` in place (the file keeps
 * its size). Only for an encode without a gain map, whose `pixi` could be shared with the map's 8-bit
 * items (libavif writes equal properties once). 0, or -1 when the layout is not libavif's. */
static int set_pixi_depth(uint8_t *file, size_t size, uint8_t depth) {
  const uint8_t *end = file + size, *meta, *meta_end, *iprp, *iprp_end, *ipco, *ipco_end;
  if (!find_box(file, end, "meta", &meta, &meta_end)) return -1;
  meta += 4; /* FullBox */
  if (!find_box(meta, meta_end, "iprp", &iprp, &iprp_end) || !find_box(iprp, iprp_end, "ipco", &ipco, &ipco_end))
    return -1;
  int found = 0;
  for (const uint8_t *p = ipco; ipco_end - p >= 8 && be32(p) >= 8; p += be32(p)) {
    if (memcmp(p + 4, "pixi", 4)) continue;
    /* size, type, version and flags, num_channels, then one byte a channel */
    if (be32(p) < 13 || p[8] || p[9] || p[10] || p[11] || be32(p) != 13u + p[12]) return -1;
    for (uint32_t c = 0; c < p[12]; c++) ((uint8_t *)p)[13 + c] = depth;
    found = 1;
  }
  return found ? 0 : -1;
}

/* The encode in steps, so that the caller can give way between cells (a Worker's isolate serves other
 * requests only between calls): sr_avif_encode_begin, then sr_avif_encode_cell until it answers 0, then
 * sr_avif_encode_finish. Each step of a cell is one libaom encode of that cell (its colour, then its alpha),
 * through libavif's own libaom codec called directly, with what avifEncoderAddImageGrid would give it: the
 * cell padded to the first cell's size as libavif pads it, tiles 0, the grid's alpha decision. The payloads
 * are kept; sr_avif_encode_finish then runs avifEncoderAddImageGrid as before, whose codecs replay the
 * kept payloads instead of encoding (sr_avif_codec_create below), so libavif still writes the container:
 * the bytes are those of the one-call encode of the same grid. */

typedef struct sr_avif_encode_state {
  avifEncoder *enc;           /* the settings every cell is encoded with, and libavif's container writer */
  int quality;
  uint32_t depth;             /* the picture's, or 8 with a gain map (set_pixi_depth says why) */
  avifBool alpha_present;     /* libavif's rule: an alpha plane, and some cell not opaque */
  uint32_t cells;             /* the grid's */
  uint32_t next_cell;         /* cells encoded so far */
  avifRWData *color, *alpha;  /* one payload per cell, in cell order */
  avifRWData *gain;           /* the gain map's, when there is one */
  uint32_t replay_color, replay_alpha; /* payloads handed back so far by the replaying codecs (colour: the
                                          picture's cells, then the gain map's, as libavif adds its items) */
} sr_avif_encode_state;

/* The encode under way in this instance (one picture at a time: an instance is borrowed whole), which the
 * replaying codecs read. */
static sr_avif_encode_state *replaying;

static void free_state(sr_avif_encode_state *s) {
  if (!s) return;
  if (replaying == s) replaying = NULL;
  if (s->enc) avifEncoderDestroy(s->enc);
  for (uint32_t i = 0; i < s->cells; i++) {
    if (s->color) avifRWDataFree(&s->color[i]);
    if (s->alpha) avifRWDataFree(&s->alpha[i]);
    if (s->gain) avifRWDataFree(&s->gain[i]);
  }
  free(s->color);
  free(s->alpha);
  free(s->gain);
  free(s);
}

/* An 8-bit full-range sample as a 10-bit one: luma and alpha scaled by 1023 / 255 (white stays white, opaque
 * opaque), chroma about its middle (128 → 512), as libavif's conversion from RGB to 10-bit YUV would write
 * the same colour. */
static uint16_t widen_luma[256], widen_chroma[256];

static void widen_tables(void) {
  if (widen_luma[255]) return;
  for (int v = 0; v < 256; v++) {
    widen_luma[v] = (uint16_t)((v * 1023 + 127) / 255);
    int c = 512 + (int)(((v - 128) * 1023 + (v >= 128 ? 127 : -127)) / 255);
    widen_chroma[v] = (uint16_t)(c < 0 ? 0 : c > 1023 ? 1023 : c);
  }
}

/* libavif's avifImageCopyAndPad (write.c, static there) for an 8-bit cell: copied and padded with its last
 * column and row to width × height, at `depth` bits (10: widened sample by sample). */
static avifResult copy_and_pad(avifImage *dst, const avifImage *src, uint32_t width, uint32_t height, uint32_t depth) {
  avifResult r = avifImageCopy(dst, src, (avifPlanesFlag)0);
  if (r != AVIF_RESULT_OK) return r;
  dst->width = width;
  dst->height = height;
  dst->depth = depth;
  if (src->yuvPlanes[AVIF_CHAN_Y] && (r = avifImageAllocatePlanes(dst, AVIF_PLANES_YUV)) != AVIF_RESULT_OK) return r;
  if (src->alphaPlane && (r = avifImageAllocatePlanes(dst, AVIF_PLANES_A)) != AVIF_RESULT_OK) return r;
  if (depth > 8) widen_tables();
  for (int plane = AVIF_CHAN_Y; plane <= AVIF_CHAN_A; ++plane) {
    const uint8_t *src_row = avifImagePlane(src, plane);
    const uint32_t src_bytes = avifImagePlaneRowBytes(src, plane);
    const uint32_t src_w = avifImagePlaneWidth(src, plane), src_h = avifImagePlaneHeight(src, plane);
    uint8_t *dst_row = avifImagePlane(dst, plane);
    const uint32_t dst_bytes = avifImagePlaneRowBytes(dst, plane);
    const uint32_t dst_w = avifImagePlaneWidth(dst, plane), dst_h = avifImagePlaneHeight(dst, plane);
    const uint16_t *widen = plane == AVIF_CHAN_U || plane == AVIF_CHAN_V ? widen_chroma : widen_luma;
    for (uint32_t j = 0; j < src_h; ++j) {
      if (depth > 8) {
        uint16_t *row16 = (uint16_t *)dst_row;
        for (uint32_t x = 0; x < src_w; ++x) row16[x] = widen[src_row[x]];
        for (uint32_t x = src_w; x < dst_w; ++x) row16[x] = row16[src_w - 1];
      } else {
        memcpy(dst_row, src_row, src_w);
        if (dst_w > src_w) memset(dst_row + src_w, dst_row[src_w - 1], dst_w - src_w);
      }
      src_row += src_bytes;
      dst_row += dst_bytes;
    }
    for (uint32_t j = src_h; j < dst_h; ++j) {
      memcpy(dst_row, dst_row - dst_bytes, (size_t)dst_w * (depth > 8 ? 2 : 1));
      dst_row += dst_bytes;
    }
  }
  return AVIF_RESULT_OK;
}

static void encode_failed(sr_avif *a, const char *step, avifResult r) {
  set_message(a, step, r);
  /* libavif's own words on what it refused (a grid's dimensions, an option's value), when it has any. */
  if (a->encoding && a->encoding->enc && a->encoding->enc->diag.error[0]) {
    const size_t used = strlen(a->message);
    snprintf(a->message + used, sizeof a->message - used, " (%s)", a->encoding->enc->diag.error);
  }
  free_state(a->encoding);
  a->encoding = NULL;
}

/* Starts an encode once every row has arrived: quality 0–100 (libavif's scale), speed 0–10 (libaom's
 * cpu-used; a still image is encoded in libaom's all-intra mode). 0, or -1 with a message. */
int sr_avif_encode_begin(sr_avif *a, int quality, int speed) {
  if (a->next_row != a->height) {
    snprintf(a->message, sizeof a->message, "%u of %u rows given", a->next_row, a->height);
    return -1;
  }
  avifRWDataFree(&a->output);
  free_state(a->encoding);
  const uint32_t cells = a->cols * a->rows;
  sr_avif_encode_state *s = a->encoding = calloc(1, sizeof *s);
  if (s) {
    s->enc = avifEncoderCreate();
    s->color = calloc(cells, sizeof *s->color);
    s->alpha = calloc(cells, sizeof *s->alpha);
    s->gain = calloc(cells, sizeof *s->gain);
    s->cells = cells;
  }
  if (!s || !s->enc || !s->color || !s->alpha || !s->gain) {
    encode_failed(a, "sr_avif_encode_begin", AVIF_RESULT_OUT_OF_MEMORY);
    return -1;
  }
  s->quality = quality;
  s->depth = a->gain_cells ? 8 : a->depth;
  s->enc->maxThreads = 1;
  s->enc->quality = quality;
  s->enc->qualityAlpha = quality;
  s->enc->speed = speed;
  avifResult r = AVIF_RESULT_OK;
  for (uint32_t i = 0; i < a->option_count && r == AVIF_RESULT_OK; i++) {
    r = avifEncoderSetCodecSpecificOption(s->enc, a->options[i][0], a->options[i][1]);
  }
  if (r != AVIF_RESULT_OK) {
    encode_failed(a, "avifEncoderSetCodecSpecificOption", r);
    return -1;
  }
  if (a->channels == 4) {
    for (uint32_t i = 0; i < cells && !s->alpha_present; i++) s->alpha_present = !avifImageIsOpaque(a->cells[i]);
  }
  return 0;
}

/* Encodes the next cell (its colour and, when the picture has alpha, its alpha). The cells left after it,
 * or -1 with a message (the encode is then over). */
/* One libaom encode of `image` (a cell's colour or alpha, or a gain map cell) as libavif's own codec does it
 * for a grid's cell; its payload is taken into `payload`. */
static avifResult encode_one(sr_avif_encode_state *s, const avifImage *image, int alpha, int quality,
                             avifRWData *payload) {
  avifCodec *codec = avifCodecCreateAOM();
  avifCodecEncodeOutput *out = avifCodecEncodeOutputCreate();
  avifResult r;
  if (!codec || !out) {
    r = AVIF_RESULT_OUT_OF_MEMORY;
  } else {
    codec->csOptions = s->enc->csOptions;
    codec->diag = &s->enc->diag;
    r = codec->encodeImage(codec, s->enc, image, alpha, 0, 0, quality, (avifEncoderChanges)0, s->alpha_present,
                           AVIF_ADD_IMAGE_FLAG_SINGLE, out);
    if (r == AVIF_RESULT_UNKNOWN_ERROR) r = alpha ? AVIF_RESULT_ENCODE_ALPHA_FAILED : AVIF_RESULT_ENCODE_COLOR_FAILED;
    if (r == AVIF_RESULT_OK && out->samples.count != 1) r = AVIF_RESULT_UNKNOWN_ERROR;
    if (r == AVIF_RESULT_OK) {
      /* The payload is taken over from the output, not copied. */
      *payload = out->samples.sample[0].data;
      out->samples.sample[0].data = (avifRWData)AVIF_DATA_EMPTY;
    }
  }
  if (out) avifCodecEncodeOutputDestroy(out);
  if (codec) avifCodecDestroy(codec);
  return r;
}

/* `cell` itself, or a copy padded to `model`'s size as libavif pads a grid's smaller cells and widened to
 * `depth` bits (*padded: the copy to destroy). */
static const avifImage *padded_like(const avifImage *cell, const avifImage *model, uint32_t depth,
                                    avifImage **padded, avifResult *r) {
  *padded = NULL;
  if (cell->width == model->width && cell->height == model->height && cell->depth == depth) return cell;
  *padded = avifImageCreateEmpty();
  *r = *padded ? copy_and_pad(*padded, cell, model->width, model->height, depth) : AVIF_RESULT_OUT_OF_MEMORY;
  return *padded;
}

/* Encodes the next cell (its colour, its alpha when the picture has alpha, and its part of the gain map
 * when there is one). The cells left after it, or -1 with a message (the encode is then over). */
int sr_avif_encode_cell(sr_avif *a) {
  sr_avif_encode_state *s = a->encoding;
  if (!s || s->next_cell == a->cols * a->rows) {
    snprintf(a->message, sizeof a->message, "no cell to encode");
    return -1;
  }
  const uint32_t i = s->next_cell;
  avifImage *padded;
  avifResult r = AVIF_RESULT_OK;
  const avifImage *cell = padded_like(a->cells[i], a->cells[0], s->depth, &padded, &r);
  for (int alpha = 0; alpha <= (s->alpha_present ? 1 : 0) && r == AVIF_RESULT_OK; alpha++) {
    r = encode_one(s, cell, alpha, s->quality, alpha ? &s->alpha[i] : &s->color[i]);
  }
  if (padded) avifImageDestroy(padded);
  if (r == AVIF_RESULT_OK && a->gain_cells) {
    const avifImage *map = padded_like(a->gain_cells[i], a->gain_cells[0], 8, &padded, &r);
    if (r == AVIF_RESULT_OK) r = encode_one(s, map, 0, a->gain_quality, &s->gain[i]);
    if (padded) avifImageDestroy(padded);
  }
  if (r != AVIF_RESULT_OK) {
    encode_failed(a, "encoding a cell", r);
    return -1;
  }
  s->next_cell++;
  return (int)(a->cols * a->rows - s->next_cell);
}

/* The replaying codec's encode: the next kept payload of the kind asked for, handed over (libavif copies it
 * into its item; ours is freed at once). */
static avifResult replay_encode(avifCodec *codec, avifEncoder *encoder, const avifImage *image, avifBool alpha,
                                int tileRowsLog2, int tileColsLog2, int quality, avifEncoderChanges changes,
                                avifBool disableLaggedOutput, avifAddImageFlags flags, avifCodecEncodeOutput *output) {
  (void)codec, (void)encoder, (void)image, (void)tileRowsLog2, (void)tileColsLog2, (void)quality, (void)changes,
    (void)disableLaggedOutput, (void)flags;
  sr_avif_encode_state *s = replaying;
  if (!s) return AVIF_RESULT_UNKNOWN_ERROR;
  avifRWData *payload;
  if (alpha) payload = &s->alpha[s->replay_alpha++];
  else if (s->replay_color < s->cells) payload = &s->color[s->replay_color++];
  else payload = &s->gain[s->replay_color++ - s->cells];
  if (!payload->size) return AVIF_RESULT_UNKNOWN_ERROR;
  const avifResult r = avifCodecEncodeOutputAddSample(output, payload->data, payload->size, AVIF_TRUE);
  avifRWDataFree(payload);
  return r;
}

static avifBool replay_finish(avifCodec *codec, avifCodecEncodeOutput *output) {
  (void)codec, (void)output;
  return AVIF_TRUE;
}

/* libavif's table of codecs creates its libaom codec through this (build-avif.sh compiles libavif's avif.c
 * with avifCodecCreateAOM renamed to it): libaom's own, except while sr_avif_encode_finish writes the
 * container, when it replays the kept payloads. */
avifCodec *sr_avif_codec_create(void) {
  avifCodec *codec = avifCodecCreateAOM();
  if (codec && replaying) {
    codec->encodeImage = replay_encode;
    codec->encodeFinish = replay_finish;
  }
  return codec;
}

/* Writes the file once every cell is encoded. 0, or -1 with a message. */
int sr_avif_encode_finish(sr_avif *a) {
  sr_avif_encode_state *s = a->encoding;
  if (!s || s->next_cell != a->cols * a->rows) {
    snprintf(a->message, sizeof a->message, "cells left to encode");
    return -1;
  }
  avifEncoder *enc = s->enc;
  avifResult r = AVIF_RESULT_OK;
  const char *step = "avifCleanApertureBoxFromCropRect";
  const int padded = a->coded_w != a->width || a->coded_h != a->height;
  if (padded) {
    /* libavif writes a grid's transforms from its first cell. */
    const avifCropRect crop = { 0, 0, a->width, a->height };
    if (avifCleanApertureBoxFromCropRect(&a->cells[0]->clap, &crop, a->coded_w, a->coded_h, &enc->diag)) {
      a->cells[0]->transformFlags |= AVIF_TRANSFORM_CLAP;
    } else {
      r = AVIF_RESULT_INVALID_ARGUMENT;
    }
  }
  /* Each cell carries its part of the gain map while libavif writes the file (all cells or none, the same
   * metadata in each); the map's pixels stay ours for another encode (a size target's). */
  for (uint32_t i = 0; a->gain_cells && i < a->cols * a->rows && r == AVIF_RESULT_OK; i++) {
    avifGainMap *g = avifGainMapCreate();
    if (!g) {
      r = AVIF_RESULT_OUT_OF_MEMORY;
      break;
    }
    *g = *a->gain;
    g->image = a->gain_cells[i];
    a->cells[i]->gainMap = g;
  }
  replaying = s;
  if (r == AVIF_RESULT_OK) {
    step = "avifEncoderAddImage";
    r = a->cols * a->rows == 1
          ? avifEncoderAddImage(enc, a->cells[0], 1, AVIF_ADD_IMAGE_FLAG_SINGLE)
          : avifEncoderAddImageGrid(enc, a->cols, a->rows, (const avifImage *const *)a->cells, AVIF_ADD_IMAGE_FLAG_SINGLE);
  }
  if (r == AVIF_RESULT_OK) {
    step = "avifEncoderFinish";
    r = avifEncoderFinish(enc, &a->output);
  }
  replaying = NULL;
  for (uint32_t i = 0; i < a->cols * a->rows; i++) {
    if (!a->cells[i]->gainMap) continue;
    a->cells[i]->gainMap->image = NULL;
    a->cells[i]->gainMap->altICC = (avifRWData)AVIF_DATA_EMPTY;
    avifGainMapDestroy(a->cells[i]->gainMap);
    a->cells[i]->gainMap = NULL;
  }
  /* Another encode (a size target's) sets it again. */
  a->cells[0]->transformFlags &= ~(avifTransformFlags)AVIF_TRANSFORM_CLAP;
  if (r == AVIF_RESULT_OK && padded && a->gain_cells) {
    /* The clean aperture would have to crop the tone-mapped item too, which strip_cell_clap does not know. */
    step = "a padded grid with a gain map";
    r = AVIF_RESULT_NOT_IMPLEMENTED;
  }
  if (r == AVIF_RESULT_OK && padded && strip_cell_clap(a->output.data, a->output.size) != 0) {
    step = "strip_cell_clap";
    r = AVIF_RESULT_UNKNOWN_ERROR;
  }
  if (r == AVIF_RESULT_OK && s->depth > 8 && set_pixi_depth(a->output.data, a->output.size, (uint8_t)s->depth) != 0) {
    step = "set_pixi_depth";
    r = AVIF_RESULT_UNKNOWN_ERROR;
  }
  if (r != AVIF_RESULT_OK) {
    encode_failed(a, step, r);
    return -1;
  }
  free_state(a->encoding);
  a->encoding = NULL;
  return 0;
}

const uint8_t *sr_avif_output(const sr_avif *a) { return a->output.data; }
uint32_t sr_avif_output_len(const sr_avif *a) { return (uint32_t)a->output.size; }
