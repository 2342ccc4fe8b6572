/*
 * The JPEG XL encoder (libjxl): RGB(A) rows become a lossy JXL, and a JPEG becomes a lossless JXL that
 * rebuilds it byte for byte.
 *
 * Lossy: the rows are held as 8-bit RGB(A) (3 or 4 bytes a pixel; libjxl's own frame would be 12 or 16,
 * as floats) and handed to libjxl through its chunked-frame API (JxlEncoderAddChunkedFrame), which asks
 * for one rectangle at a time and, with streaming buffering, converts and encodes the picture group by
 * group, so its working memory is that of a few groups, not of the picture. The rows cannot be handed
 * over as they arrive: libjxl pulls the rectangles from inside one call, while the caller's decoder
 * pushes rows from JavaScript, so the 8-bit picture is the one frame held.
 *
 * The encode is one libjxl call (about 1.3 s a megapixel at effort 5), so it gives way to the isolate's
 * other requests from inside: libjxl calls sr_jxl_give_way after each unit of its two longest loops
 * (wasm/patches/jxl/), where the encode may be suspended with emscripten's Asyncify and resumed on a later
 * task (srw_give_way, src/sr_give_way.js).
 *
 * The output goes through an output processor (JxlEncoderSetOutputProcessor) into one growing buffer,
 * so libjxl keeps no copy of its own of the encoded groups.
 *
 * Lossless JPEG: JxlEncoderStoreJPEGMetadata and JxlEncoderAddJPEGFrame keep the JPEG's DCT coefficients
 * and what rebuilds its file (the `jbrd` box), in a container.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jxl/encode.h"

/* The JavaScript side of giving way (src/sr_give_way.js): told the work done, it may suspend the call. */
extern void srw_give_way(unsigned work);

/*
 * What a pixel of each step (the patch's first argument) costs, in the units of give-way.ts's
 * ENGINE_SLICE_PIXELS (about 20 ns of the slowest row work each), so that a slice of libjxl's work lasts
 * about as long as a slice of any other engine work: each step's share of a 1 MP encode at effort 5 in
 * Node (a --profiling-funcs build's CPU profile, docs/experiments/jxl.md), in ns a pixel, over 20.
 */
enum { SR_JXL_STEP_HEURISTICS, SR_JXL_STEP_COEFFICIENTS };
static const unsigned step_work_per_pixel[] = {
    [SR_JXL_STEP_HEURISTICS] = 27,   /* block sizes and quantisation, per 64 × 64 tile: 550 ns */
    [SR_JXL_STEP_COEFFICIENTS] = 8,  /* DCT and quantisation, per 256 × 256 group: 160 ns */
};

/*
 * The highest effort at which an encode gives way. Asyncify rewrote only the functions on the stack of an
 * encode at the service's effort (build-jxl.sh's list); from effort 7 libjxl looks for patches and from 8
 * runs butteraugli loops, other paths to the same loops, which a suspension would break.
 */
#define SR_JXL_GIVE_WAY_MAX_EFFORT 6

/* Set by sr_jxl_encode for its call: only a lossy encode's stack is suspendable. */
static int giving_way;

/* Called by libjxl's patched loops (wasm/patches/jxl/) after each unit of a step, with its pixels. */
void sr_jxl_give_way(unsigned step, unsigned pixels) {
  if (!giving_way || step >= sizeof step_work_per_pixel / sizeof *step_work_per_pixel) return;
  srw_give_way(pixels * step_work_per_pixel[step]);
}

typedef struct sr_jxl {
  uint32_t width, height, channels;
  uint32_t next_row;
  uint8_t *pixels; /* width × height × channels, the rows as they came */
  uint8_t *icc;
  size_t icc_len;
  /* Boxes written before the codestream (metadata=keep): the Exif box's content (a TIFF header offset
   * of 0, then the TIFF block) and the XMP packet; none: a bare codestream. */
  uint8_t *exif, *xmp;
  size_t exif_len, xmp_len;
  /* The output, grown by get_buffer; `position` is where libjxl writes next (it may seek back before
   * the end to fill in a size), `length` the furthest it has written. */
  uint8_t *out;
  size_t out_cap, position, length;
  int out_failed;
  char message[256];
} sr_jxl;

void sr_jxl_destroy(sr_jxl *j) {
  if (!j) return;
  free(j->pixels);
  free(j->icc);
  free(j->exif);
  free(j->xmp);
  free(j->out);
  free(j);
}

/* A picture of width × height with channels 3 (RGB) or 4 (RGBA); NULL when memory runs out. */
sr_jxl *sr_jxl_create(uint32_t width, uint32_t height, uint32_t channels) {
  if (!width || !height || (channels != 3 && channels != 4)) return NULL;
  sr_jxl *j = calloc(1, sizeof *j);
  if (!j) return NULL;
  j->width = width;
  j->height = height;
  j->channels = channels;
  j->pixels = malloc((size_t)width * height * channels);
  if (!j->pixels) {
    sr_jxl_destroy(j);
    return NULL;
  }
  return j;
}

/* A lossless transcode's encoder: no picture of its own. */
sr_jxl *sr_jxl_create_empty(void) { return calloc(1, sizeof(sr_jxl)); }

const char *sr_jxl_message(sr_jxl *j) { return j ? j->message : "out of memory"; }

/* The ICC profile describing the rows' colours (none: sRGB), copied. */
int sr_jxl_icc(sr_jxl *j, const uint8_t *icc, uint32_t len) {
  free(j->icc);
  j->icc = malloc(len);
  if (!j->icc) {
    snprintf(j->message, sizeof j->message, "out of memory for the ICC profile");
    return -1;
  }
  memcpy(j->icc, icc, len);
  j->icc_len = len;
  return 0;
}

/* The EXIF (a TIFF block, kind 0) or XMP packet (kind 1) to write in a box, copied. */
int sr_jxl_metadata(sr_jxl *j, int kind, const uint8_t *data, uint32_t len) {
  size_t head = kind == 0 ? 4 : 0;
  uint8_t *copy = calloc(1, head + len);
  if (!copy) {
    snprintf(j->message, sizeof j->message, "out of memory for the metadata");
    return -1;
  }
  memcpy(copy + head, data, len);
  if (kind == 0) {
    free(j->exif);
    j->exif = copy;
    j->exif_len = head + len;
  } else {
    free(j->xmp);
    j->xmp = copy;
    j->xmp_len = len;
  }
  return 0;
}

/* `count` rows of width × channels bytes, in order. */
int sr_jxl_rows(sr_jxl *j, const uint8_t *rows, uint32_t count) {
  if (count > j->height - j->next_row) {
    snprintf(j->message, sizeof j->message, "more rows than the picture has");
    return -1;
  }
  size_t row_bytes = (size_t)j->width * j->channels;
  memcpy(j->pixels + (size_t)j->next_row * row_bytes, rows, row_bytes * count);
  j->next_row += count;
  return 0;
}

/* The output processor: one buffer, grown to whatever libjxl asks for past the position. */
static void *out_get_buffer(void *opaque, size_t *size) {
  sr_jxl *j = opaque;
  size_t want = *size < 65536 ? 65536 : *size;
  if (j->position + want > j->out_cap) {
    size_t cap = j->out_cap ? j->out_cap : 65536;
    while (cap < j->position + want) cap += cap / 2 + 65536;
    uint8_t *grown = realloc(j->out, cap);
    if (!grown) {
      j->out_failed = 1;
      *size = 0;
      return NULL;
    }
    j->out = grown;
    j->out_cap = cap;
  }
  *size = want;
  return j->out + j->position;
}

static void out_release_buffer(void *opaque, size_t written) {
  sr_jxl *j = opaque;
  j->position += written;
  if (j->position > j->length) j->length = j->position;
}

static void out_seek(void *opaque, uint64_t position) { ((sr_jxl *)opaque)->position = (size_t)position; }

static void out_set_finalized_position(void *opaque, uint64_t position) {
  (void)opaque;
  (void)position;
}

/* The chunked-frame source: rectangles are views of the held rows (row_offset is the row's stride). */
static void src_format(void *opaque, JxlPixelFormat *format) {
  sr_jxl *j = opaque;
  format->num_channels = j->channels;
  format->data_type = JXL_TYPE_UINT8;
  format->endianness = JXL_NATIVE_ENDIAN;
  format->align = 0;
}

static const void *view(sr_jxl *j, size_t x, size_t y, size_t *row_offset) {
  *row_offset = (size_t)j->width * j->channels;
  return j->pixels + y * *row_offset + x * j->channels;
}

static const void *src_data(void *opaque, size_t x, size_t y, size_t w, size_t h, size_t *row_offset) {
  (void)w;
  (void)h;
  return view(opaque, x, y, row_offset);
}

static void src_extra_format(void *opaque, size_t ec, JxlPixelFormat *format) {
  (void)ec;
  src_format(opaque, format);
}

/* Alpha is the colour rows' fourth channel: libjxl reads it from the same interleaved view. */
static const void *src_extra_data(void *opaque, size_t ec, size_t x, size_t y, size_t w, size_t h,
                                  size_t *row_offset) {
  (void)ec;
  (void)w;
  (void)h;
  return view(opaque, x, y, row_offset);
}

static void src_release(void *opaque, const void *buf) {
  (void)opaque;
  (void)buf;
}

static int failed(sr_jxl *j, JxlEncoder *enc, const char *what) {
  JxlEncoderError e = JxlEncoderGetError(enc);
  if (j->out_failed) snprintf(j->message, sizeof j->message, "%s: out of memory for the output", what);
  else if (e == JXL_ENC_ERR_OOM) snprintf(j->message, sizeof j->message, "%s: out of memory", what);
  else if (e == JXL_ENC_ERR_JBRD)
    snprintf(j->message, sizeof j->message, "%s: this JPEG cannot be rebuilt from a JPEG XL", what);
  else if (e == JXL_ENC_ERR_BAD_INPUT) snprintf(j->message, sizeof j->message, "%s: the input was refused", what);
  else snprintf(j->message, sizeof j->message, "%s failed (libjxl error %d)", what, (int)e);
  JxlEncoderDestroy(enc);
  return -1;
}

static void reset_output(sr_jxl *j) {
  j->position = j->length = 0;
  j->out_failed = 0;
}

static JxlEncoder *new_encoder(sr_jxl *j) {
  JxlEncoder *enc = JxlEncoderCreate(NULL);
  if (!enc) {
    snprintf(j->message, sizeof j->message, "out of memory for the encoder");
    return NULL;
  }
  struct JxlEncoderOutputProcessor processor = {j, out_get_buffer, out_release_buffer, out_seek,
                                                out_set_finalized_position};
  if (JxlEncoderSetOutputProcessor(enc, processor) != JXL_ENC_SUCCESS) {
    failed(j, enc, "output");
    return NULL;
  }
  return enc;
}

/* Encodes the held rows at a butteraugli distance (libjxl's quality: 0 lossless … 25) and effort (1–9);
 * the output is then sr_jxl_output. Again for another distance. */
int sr_jxl_encode(sr_jxl *j, float distance, int effort) {
  if (j->next_row != j->height) {
    snprintf(j->message, sizeof j->message, "the picture has %u of its %u rows", j->next_row, j->height);
    return -1;
  }
  reset_output(j);
  JxlEncoder *enc = new_encoder(j);
  if (!enc) return -1;
  JxlBasicInfo info;
  JxlEncoderInitBasicInfo(&info);
  info.xsize = j->width;
  info.ysize = j->height;
  info.bits_per_sample = 8;
  info.num_color_channels = 3;
  info.uses_original_profile = JXL_FALSE; /* lossy: XYB */
  if (j->channels == 4) {
    info.num_extra_channels = 1;
    info.alpha_bits = 8;
  }
  if (JxlEncoderSetBasicInfo(enc, &info) != JXL_ENC_SUCCESS) return failed(j, enc, "basic info");
  if (j->channels == 4) {
    JxlExtraChannelInfo alpha;
    JxlEncoderInitExtraChannelInfo(JXL_CHANNEL_ALPHA, &alpha);
    alpha.bits_per_sample = 8;
    if (JxlEncoderSetExtraChannelInfo(enc, 0, &alpha) != JXL_ENC_SUCCESS) return failed(j, enc, "alpha");
  }
  if (j->icc) {
    if (JxlEncoderSetICCProfile(enc, j->icc, j->icc_len) != JXL_ENC_SUCCESS) return failed(j, enc, "ICC profile");
  } else {
    JxlColorEncoding srgb;
    JxlColorEncodingSetToSRGB(&srgb, JXL_FALSE);
    if (JxlEncoderSetColorEncoding(enc, &srgb) != JXL_ENC_SUCCESS) return failed(j, enc, "colour encoding");
  }
  /* The boxes go before the codestream; closing the input (the last frame) closes them. */
  if ((j->exif || j->xmp) && JxlEncoderUseBoxes(enc) != JXL_ENC_SUCCESS) return failed(j, enc, "boxes");
  if (j->exif && JxlEncoderAddBox(enc, "Exif", j->exif, j->exif_len, JXL_FALSE) != JXL_ENC_SUCCESS)
    return failed(j, enc, "EXIF");
  if (j->xmp && JxlEncoderAddBox(enc, "xml ", j->xmp, j->xmp_len, JXL_FALSE) != JXL_ENC_SUCCESS)
    return failed(j, enc, "XMP");
  JxlEncoderFrameSettings *settings = JxlEncoderFrameSettingsCreate(enc, NULL);
  if (!settings || JxlEncoderSetFrameDistance(settings, distance) != JXL_ENC_SUCCESS ||
      JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS ||
      /* Streaming for any picture past one group: the bounded memory is the point of this path. */
      JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_BUFFERING, 2) != JXL_ENC_SUCCESS)
    return failed(j, enc, "settings");
  struct JxlChunkedFrameInputSource source = {j, src_format, src_data, src_extra_format, src_extra_data, src_release};
  /* With an output processor, adding the last frame encodes it (libjxl flushes it there). */
  giving_way = effort <= SR_JXL_GIVE_WAY_MAX_EFFORT;
  JxlEncoderStatus added = JxlEncoderAddChunkedFrame(settings, JXL_TRUE, source);
  giving_way = 0;
  if (added != JXL_ENC_SUCCESS) return failed(j, enc, "encode");
  JxlEncoderDestroy(enc);
  return 0;
}

/* A JPEG as a lossless JXL in a container, with what rebuilds the JPEG byte for byte. */
int sr_jxl_jpeg(sr_jxl *j, const uint8_t *jpeg, uint32_t len, int effort) {
  reset_output(j);
  JxlEncoder *enc = new_encoder(j);
  if (!enc) return -1;
  if (JxlEncoderUseContainer(enc, JXL_TRUE) != JXL_ENC_SUCCESS ||
      JxlEncoderStoreJPEGMetadata(enc, JXL_TRUE) != JXL_ENC_SUCCESS)
    return failed(j, enc, "container");
  JxlEncoderFrameSettings *settings = JxlEncoderFrameSettingsCreate(enc, NULL);
  if (!settings || JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, effort) != JXL_ENC_SUCCESS)
    return failed(j, enc, "settings");
  if (JxlEncoderAddJPEGFrame(settings, jpeg, len) != JXL_ENC_SUCCESS) return failed(j, enc, "JPEG transcode");
  JxlEncoderCloseInput(enc);
  if (JxlEncoderFlushInput(enc) != JXL_ENC_SUCCESS) return failed(j, enc, "JPEG transcode");
  JxlEncoderDestroy(enc);
  return 0;
}

const uint8_t *sr_jxl_output(sr_jxl *j) { return j->out; }
uint32_t sr_jxl_output_len(sr_jxl *j) { return (uint32_t)j->length; }
