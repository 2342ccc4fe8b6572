/*
 * Animated WebP input: libwebp's WebPAnimDecoder (src/demux/anim_decode.c) over a copy of the file in the
 * instance's memory. Each call to sr_webp_animdec_next decodes one frame onto the canvas (blend and
 * disposal as the file says, non-premultiplied RGBA) and answers the whole canvas, so the caller resizes
 * and encodes it before asking for the next: the decoder holds the canvas and the previous one after
 * disposal (two canvases, counted by src/compress/memory-plan.ts) and one frame's decoder state.
 * Each call is synchronous: the caller gives way between frames.
 */
#include <emscripten/emscripten.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "webp/demux.h"

typedef struct sr_webp_animdec {
  WebPAnimDecoder *dec;
  WebPAnimInfo info;
  int timestamp; /* the end of the last frame given, in ms */
  int duration;  /* the last frame's duration, in ms */
} sr_webp_animdec;

/* What sr_webp_animdec_info answers. */
enum { SR_ANIM_WIDTH = 0, SR_ANIM_HEIGHT = 1, SR_ANIM_FRAMES = 2, SR_ANIM_LOOP = 3, SR_ANIM_DURATION = 4 };

EMSCRIPTEN_KEEPALIVE void sr_webp_animdec_destroy(sr_webp_animdec *d) {
  if (!d) return;
  WebPAnimDecoderDelete(d->dec);
  free(d);
}

/* A decoder over data (size bytes, kept by the caller until destroy); NULL when the file is not an
 * animation libwebp can read, or out of memory. */
EMSCRIPTEN_KEEPALIVE sr_webp_animdec *sr_webp_animdec_create(const uint8_t *data, uint32_t size) {
  sr_webp_animdec *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) {
    free(d);
    return NULL;
  }
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData file = {data, size};
  d->dec = WebPAnimDecoderNew(&file, &options);
  if (!d->dec || !WebPAnimDecoderGetInfo(d->dec, &d->info)) {
    sr_webp_animdec_destroy(d);
    return NULL;
  }
  return d;
}

EMSCRIPTEN_KEEPALIVE int sr_webp_animdec_info(sr_webp_animdec *d, int what) {
  switch (what) {
  case SR_ANIM_WIDTH: return (int)d->info.canvas_width;
  case SR_ANIM_HEIGHT: return (int)d->info.canvas_height;
  case SR_ANIM_FRAMES: return (int)d->info.frame_count;
  case SR_ANIM_LOOP: return (int)d->info.loop_count;
  case SR_ANIM_DURATION: return d->duration;
  default: return -1;
  }
}

/* The next frame composed on the canvas (width × height RGBA, valid until the next call), its duration
 * at SR_ANIM_DURATION; NULL when there is none left or its data is broken. */
EMSCRIPTEN_KEEPALIVE uint8_t *sr_webp_animdec_next(sr_webp_animdec *d) {
  uint8_t *canvas = NULL;
  int timestamp = 0;
  if (!WebPAnimDecoderHasMoreFrames(d->dec) || !WebPAnimDecoderGetNext(d->dec, &canvas, &timestamp)) return NULL;
  d->duration = timestamp - d->timestamp;
  d->timestamp = timestamp;
  return canvas;
}
