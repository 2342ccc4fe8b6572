/*
 * The band-fed WebP encoder. The lossy encoder reads a YUV 4:2:0 picture (1.5 bytes per pixel, plus 1
 * for alpha), never RGBA: rows arrive as RGB(A), are gathered SRW_BAND_ROWS at a time and converted by
 * libwebp's own importer into a small band picture, whose planes are copied into the whole picture. So
 * the conversion is exactly libwebp's (gamma-corrected, alpha-weighted chroma) and only one band of
 * RGB(A) exists at a time. The lossless encoder reads ARGB (4 bytes per pixel), written row by row.
 */
#include <emscripten/heap.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sr_webp.h"

struct sr_webp_enc {
  WebPPicture pic;
  int channels, lossless;
  int rows_in;
  uint8_t *band;
  int band_rows;
  /* The token-buffer encode in progress may grow the instance's memory up to this size. */
  size_t heap_limit;
  /* A token-buffer encode of this picture outgrew its allowance: later encodes (target_kb) go straight
   * to low-memory mode, which the same picture would outgrow again. */
  int tokens_overflowed;
  /* The percent the encode in progress last reported (it gives way as it advances: srw_give_way). */
  int percent;
};

void srw_enc_destroy(sr_webp_enc *e) {
  if (!e) return;
  WebPPictureFree(&e->pic);
  free(e->band);
  free(e);
}

sr_webp_enc *srw_enc_create(int width, int height, int channels, int lossless) {
  if (width < 1 || height < 1 || width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION || (channels != 3 && channels != 4))
    return NULL;
  sr_webp_enc *e = calloc(1, sizeof(sr_webp_enc));
  if (!e || !WebPPictureInit(&e->pic)) {
    free(e);
    return NULL;
  }
  e->channels = channels;
  e->lossless = lossless;
  e->pic.width = width;
  e->pic.height = height;
  e->pic.use_argb = lossless;
  e->pic.colorspace = channels == 4 ? WEBP_YUV420A : WEBP_YUV420;
  if (!WebPPictureAlloc(&e->pic)) {
    srw_enc_destroy(e);
    return NULL;
  }
  if (!lossless) {
    e->band = malloc((size_t)SRW_BAND_ROWS * width * channels);
    if (!e->band) {
      srw_enc_destroy(e);
      return NULL;
    }
  }
  return e;
}

/* Converts the gathered band (rows y0 .. y0 + band_rows - 1, y0 even) into the picture's planes. */
static int flush_band(sr_webp_enc *e) {
  const int width = e->pic.width, n = e->band_rows, y0 = e->rows_in - n;
  WebPPicture band;
  if (!WebPPictureInit(&band)) return -1;
  band.width = width;
  band.height = n;
  band.use_argb = 0;
  const int stride = width * e->channels;
  const int ok = e->channels == 4 ? WebPPictureImportRGBA(&band, e->band, stride) : WebPPictureImportRGB(&band, e->band, stride);
  if (ok) {
    WebPPicture *p = &e->pic;
    for (int j = 0; j < n; j++) memcpy(p->y + (size_t)(y0 + j) * p->y_stride, band.y + (size_t)j * band.y_stride, (size_t)width);
    const int uv_w = (width + 1) / 2;
    for (int j = 0; j < (n + 1) / 2; j++) {
      memcpy(p->u + (size_t)(y0 / 2 + j) * p->uv_stride, band.u + (size_t)j * band.uv_stride, (size_t)uv_w);
      memcpy(p->v + (size_t)(y0 / 2 + j) * p->uv_stride, band.v + (size_t)j * band.uv_stride, (size_t)uv_w);
    }
    /* libwebp's importer leaves out the alpha plane of a band that is wholly opaque. */
    for (int j = 0; p->a && j < n; j++) {
      uint8_t *dst = p->a + (size_t)(y0 + j) * p->a_stride;
      if (band.a) memcpy(dst, band.a + (size_t)j * band.a_stride, (size_t)width);
      else memset(dst, 255, (size_t)width);
    }
  }
  WebPPictureFree(&band);
  e->band_rows = 0;
  return ok ? 0 : -1;
}

int srw_enc_row(sr_webp_enc *e, const uint8_t *row) {
  if (e->rows_in >= e->pic.height) return -1;
  const int width = e->pic.width;
  if (e->lossless) {
    uint32_t *out = e->pic.argb + (size_t)e->rows_in * e->pic.argb_stride;
    if (e->channels == 4) {
      for (int x = 0; x < width; x++, row += 4)
        out[x] = ((uint32_t)row[3] << 24) | ((uint32_t)row[0] << 16) | ((uint32_t)row[1] << 8) | row[2];
    } else {
      for (int x = 0; x < width; x++, row += 3)
        out[x] = 0xff000000u | ((uint32_t)row[0] << 16) | ((uint32_t)row[1] << 8) | row[2];
    }
    e->rows_in++;
    return 0;
  }
  memcpy(e->band + (size_t)e->band_rows * width * e->channels, row, (size_t)width * e->channels);
  e->band_rows++;
  e->rows_in++;
  if (e->band_rows == SRW_BAND_ROWS || e->rows_in == e->pic.height) return flush_band(e);
  return 0;
}

static int chunk_writer(const uint8_t *data, size_t size, const WebPPicture *pic) {
  return srw_write((sr_webp *)pic->custom_ptr, data, size) == 0;
}

static const char *encode_error(WebPEncodingError code) {
  switch (code) {
    case VP8_ENC_ERROR_OUT_OF_MEMORY:
    case VP8_ENC_ERROR_BITSTREAM_OUT_OF_MEMORY:
      return "out of memory in the WebP encoder";
    case VP8_ENC_ERROR_BAD_DIMENSION:
      return "the image is too large for WebP (16383 pixels a side at most)";
    case VP8_ENC_ERROR_PARTITION0_OVERFLOW:
    case VP8_ENC_ERROR_PARTITION_OVERFLOW:
      return "the WebP encoder's partition overflowed";
    default:
      return "the WebP encoder failed";
  }
}

/*
 * Gives way to the other requests of the isolate (wasm/webp-engine.ts, give-way.ts): `pixels` of the
 * picture's encode were done since the last call. An import of the module's JavaScript that may suspend
 * the encode (emscripten's Asyncify, limited by build.sh to the functions of libwebp's encoders that are
 * on the stack here) and resume it on a later task, when the caller allows it.
 */
extern void srw_give_way(uint32_t pixels);

/*
 * libwebp calls this as its progress changes (about every percent of the image, and between its
 * phases). The token buffer grows in pages as tokens are recorded, by an amount no header predicts:
 * when the instance's memory has grown past its allowance, the encode is abandoned (libwebp frees what
 * it holds) and srw_enc_finish encodes again without the token buffer. An encode gives way here: the
 * lossless one reports each percent of each of its phases (its analysis, its predictors, its backward
 * references, its writer), the lossy one each macroblock row.
 */
static int srw_progress(int percent, const WebPPicture *pic) {
  sr_webp_enc *e = pic->user_data;
  /* Lossy: called at every macroblock row as well (patches/webp/01-progress-every-row.patch). The work
   * is counted by the percent, the clock decides the rest. */
  uint64_t pixels = 0;
  if (percent > e->percent) {
    pixels = (uint64_t)pic->width * (uint64_t)pic->height * (uint64_t)(percent - e->percent) / 100;
    e->percent = percent;
  }
  srw_give_way((uint32_t)pixels);
  return emscripten_get_heap_size() <= e->heap_limit;
}

/* One WebPEncode; heap_limit SIZE_MAX: unguarded. */
static int encode_once(sr_webp_enc *e, sr_webp *w, const WebPConfig *config, size_t heap_limit) {
  srw_output_clear(w);
  e->pic.writer = chunk_writer;
  e->pic.custom_ptr = w;
  e->percent = 0;
  e->pic.progress_hook = srw_progress;
  e->pic.user_data = e;
  e->heap_limit = heap_limit;
  const int ok = WebPEncode(config, &e->pic);
  e->pic.progress_hook = NULL;
  if (!ok) srw_output_clear(w);
  return ok;
}

/*
 * Encodes the picture: lossy at `quality`, or lossless with `quality` as its effort. The picture is
 * kept, so a caller searching a quality (target_kb) encodes again without decoding again; the
 * encoder's clean-up of fully transparent pixels only changes pixels nobody sees.
 *
 * Lossy encoding has two loops in libwebp. With the token buffer (low_memory 0) every token of the image
 * is kept and the probabilities are fitted to the whole image before anything is written; low-memory
 * mode keeps none and writes as it goes, with probabilities from the image's statistics pass, which
 * costs about 1 % more bytes (up to 2 %) and takes 1.8 times as long (docs/benchmarks.md, "WebP engine"). The token
 * buffer's size depends on the content, so `token_growth` (bytes, 0: no bound) lets a caller with a
 * fixed memory budget try it and fall back to low-memory mode when it would not fit.
 */
int srw_enc_finish(sr_webp_enc *e, sr_webp *w, int quality, int lossless, int method, int low_memory, uint32_t token_growth,
                   const char **error) {
  *error = NULL;
  if (e->rows_in != e->pic.height) {
    *error = "the WebP encoder was given the wrong number of rows";
    return -1;
  }
  WebPConfig config;
  if (!WebPConfigInit(&config)) {
    *error = "the WebP encoder's settings could not be made";
    return -1;
  }
  config.quality = (float)(quality < 0 ? 0 : quality > 100 ? 100 : quality);
  config.method = method < 0 ? 0 : method > 6 ? 6 : method;
  config.lossless = lossless && e->lossless;
  config.low_memory = low_memory != 0 || (token_growth > 0 && e->tokens_overflowed);
  if (!WebPValidateConfig(&config)) {
    *error = "the WebP encoder's settings are invalid";
    return -1;
  }
  const int guarded = !config.lossless && !config.low_memory && token_growth > 0;
  int ok = encode_once(e, w, &config, guarded ? emscripten_get_heap_size() + token_growth : SIZE_MAX);
  if (!ok && guarded && e->pic.error_code == VP8_ENC_ERROR_USER_ABORT) {
    e->tokens_overflowed = 1;
    config.low_memory = 1;
    ok = encode_once(e, w, &config, SIZE_MAX);
  }
  if (!ok) {
    *error = encode_error(e->pic.error_code);
    return -1;
  }
  if (srw_write(w, NULL, 0) != 0) {
    *error = "out of memory for the WebP output";
    return -1;
  }
  w->result_w = e->pic.width;
  w->result_h = e->pic.height;
  w->result_low_memory = !config.lossless && config.low_memory;
  return 0;
}
