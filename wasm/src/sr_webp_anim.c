/*
 * Animated WebP output: libwebp's WebPAnimEncoder (src/mux/anim_encode.c) fed one whole frame at a time,
 * so that only one source frame exists at a time in the instance (wasm/webp-engine.ts, WebpAnimEncoder).
 * The encoder keeps three canvases of its own (the frame as given, the previous one and the previous
 * one after disposal), encodes each frame's changed rectangle as it arrives, and keeps the encoded
 * frames until sr_webp_anim_finish assembles the file: src/compress/memory-plan.ts counts all of it.
 * Frames are given as RGBA into the buffer sr_webp_anim_frame answers, converted there to libwebp's
 * ARGB words in place (no second copy). Keyframes stay libwebp's default (none forced), identical
 * frames merge into one with the summed duration (libwebp does that itself).
 */
#include <emscripten/emscripten.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "webp/encode.h"
#include "webp/mux.h"

typedef struct sr_webp_anim {
  WebPAnimEncoder *enc;
  WebPConfig config;
  WebPPicture pic;
  uint32_t *frame; /* width × height words, given as RGBA bytes */
  int width, height, frames;
  WebPData output;
  char message[160];
} sr_webp_anim;

static int fail(sr_webp_anim *a, const char *message) {
  strncpy(a->message, message, sizeof a->message - 1);
  return -1;
}

EMSCRIPTEN_KEEPALIVE const char *sr_webp_anim_message(sr_webp_anim *a) { return a->message; }

EMSCRIPTEN_KEEPALIVE void sr_webp_anim_destroy(sr_webp_anim *a) {
  if (!a) return;
  WebPAnimEncoderDelete(a->enc);
  WebPDataClear(&a->output);
  free(a->frame);
  free(a);
}

/*
 * A canvas of width × height, played `loop` times (0: for ever); lossy at `quality`, or lossless with
 * `quality` as its effort, at libwebp's `method`. NULL when out of memory or the size is not WebP's.
 */
EMSCRIPTEN_KEEPALIVE sr_webp_anim *sr_webp_anim_begin(int width, int height, int loop, int quality, int lossless, int method) {
  if (width < 1 || height < 1 || width > WEBP_MAX_DIMENSION || height > WEBP_MAX_DIMENSION || loop < 0 || loop > 65535)
    return NULL;
  sr_webp_anim *a = calloc(1, sizeof(sr_webp_anim));
  if (!a) return NULL;
  a->width = width;
  a->height = height;
  WebPDataInit(&a->output);
  WebPAnimEncoderOptions options;
  if (!WebPAnimEncoderOptionsInit(&options) || !WebPConfigInit(&a->config) || !WebPPictureInit(&a->pic)) {
    free(a);
    return NULL;
  }
  options.anim_params.loop_count = loop;
  /* A GIF's background colour is not shown by browsers: transparent, as they paint it. */
  options.anim_params.bgcolor = 0x00000000u;
  options.allow_mixed = 0;
  options.minimize_size = 0;
  a->config.lossless = lossless != 0;
  a->config.quality = (float)(quality < 0 ? 0 : quality > 100 ? 100 : quality);
  a->config.method = method < 0 ? 0 : method > 6 ? 6 : method;
  a->frame = malloc((size_t)width * height * 4);
  a->enc = a->frame && WebPValidateConfig(&a->config) ? WebPAnimEncoderNew(width, height, &options) : NULL;
  if (!a->enc) {
    sr_webp_anim_destroy(a);
    return NULL;
  }
  a->pic.width = width;
  a->pic.height = height;
  a->pic.use_argb = 1;
  a->pic.argb = a->frame;
  a->pic.argb_stride = width;
  return a;
}

/* Where the caller writes the next frame: width × height RGBA pixels. */
EMSCRIPTEN_KEEPALIVE uint8_t *sr_webp_anim_frame(sr_webp_anim *a) { return (uint8_t *)a->frame; }

/* Encodes the frame written at sr_webp_anim_frame, shown from timestamp_ms on. 0 on success. */
EMSCRIPTEN_KEEPALIVE int sr_webp_anim_add(sr_webp_anim *a, int timestamp_ms) {
  const size_t n = (size_t)a->width * a->height;
  const uint8_t *rgba = (const uint8_t *)a->frame;
  for (size_t i = 0; i < n; i++, rgba += 4)
    a->frame[i] = ((uint32_t)rgba[3] << 24) | ((uint32_t)rgba[0] << 16) | ((uint32_t)rgba[1] << 8) | rgba[2];
  if (!WebPAnimEncoderAdd(a->enc, &a->pic, timestamp_ms, &a->config)) {
    const char *why = WebPAnimEncoderGetError(a->enc);
    return fail(a, why && *why ? why : "the animated WebP encoder failed");
  }
  a->frames++;
  return 0;
}

/* The last frame ends at end_ms; assembles the file (sr_webp_anim_output, _output_len). 0 on success. */
EMSCRIPTEN_KEEPALIVE int sr_webp_anim_finish(sr_webp_anim *a, int end_ms) {
  if (a->frames < 1) return fail(a, "an animation needs a frame");
  /* The frame buffer is not needed any more: freed before the file is assembled next to the frames. */
  free(a->frame);
  a->frame = NULL;
  a->pic.argb = NULL;
  if (!WebPAnimEncoderAdd(a->enc, NULL, end_ms, NULL) || !WebPAnimEncoderAssemble(a->enc, &a->output)) {
    const char *why = WebPAnimEncoderGetError(a->enc);
    return fail(a, why && *why ? why : "the animated WebP could not be assembled");
  }
  return 0;
}

EMSCRIPTEN_KEEPALIVE const uint8_t *sr_webp_anim_output(sr_webp_anim *a) { return a->output.bytes; }
EMSCRIPTEN_KEEPALIVE uint32_t sr_webp_anim_output_len(sr_webp_anim *a) { return (uint32_t)a->output.size; }
