/*
 * The WebP engine's job: one input WebP. A run decodes it with libwebp's incremental decoder
 * (WebPIDecode, then WebPIUpdate over a growing prefix of the input; VP8_STATUS_SUSPENDED means it
 * wants more bytes), hands out each row as soon as the decoder reports it ready, resamples through the
 * JPEG engine's ring, and gives every output row to a sink: the band-fed WebP encoder, a JPEG job (its
 * row source), or a frame. Lossy input is decoded to YUV 4:2:0 (+ alpha), 1.5 bytes per pixel (2.5
 * with alpha), made RGB a row pair at a time by libwebp's fancy upsampler; lossless input to RGB(A),
 * which its decoder needs whole anyway (backward references reach any earlier pixel). Every run ends with WebPIDelete, on the
 * error paths too (close_run, called at the start of each run and by sr_webp_destroy).
 */
#include <emscripten.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sr_webp.h"
#include "dsp/dsp.h"

#define TRY(w) \
  if (setjmp((w)->jump)) { \
    close_all(w); \
    return -1; \
  }

static void close_run(sr_webp *w);
static void close_all(sr_webp *w);

static void close_run(sr_webp *w) {
  if (w->idec) WebPIDelete(w->idec);
  w->idec = NULL;
  WebPFreeDecBuffer(&w->config.output);
  sr_resizer_destroy(w->resizer);
  w->resizer = NULL;
  free(w->rows);
  w->rows = NULL;
}

/* Everything a call may hold: the run's decoder and rows, and the upright frame. */
static void close_all(sr_webp *w) {
  close_run(w);
  free(w->upright_frame);
  free(w->upright_row);
  w->upright_frame = w->upright_row = NULL;
  free(w->pull);
  free(w->pending);
  w->pull = NULL;
  w->pending = NULL;
  w->pending_len = w->pending_at = w->pending_cap = 0;
}

void srw_fail(sr_webp *w, const char *message) {
  strncpy(w->message, message, sizeof(w->message) - 1);
  if (w->in_jpeg_run) sr_fail(w->jpeg, message);
  longjmp(w->jump, 1);
}

EMSCRIPTEN_KEEPALIVE sr_webp *sr_webp_create(const uint8_t *input, uint32_t len) {
  sr_webp *w = calloc(1, sizeof(sr_webp));
  if (!w) return NULL;
  w->input = input;
  w->input_len = len;
  WebPInitDecoderConfig(&w->config);
  return w;
}

/* ---- Output: a list of SR_CHUNK_BYTES chunks, never a doubling buffer. */

static int push_current(sr_webp *w) {
  if (!w->current) return 0;
  if (sr_chunk_list_push(&w->output, w->current, w->current_len)) return -1;
  w->current = NULL;
  w->current_len = 0;
  return 0;
}

/* Appends bytes; data NULL ends the output (the last, partial chunk joins the list). */
int srw_write(sr_webp *w, const uint8_t *data, size_t len) {
  if (!data) return push_current(w);
  while (len > 0) {
    if (!w->current) {
      w->current = malloc(SR_CHUNK_BYTES);
      if (!w->current) return -1;
    }
    size_t room = SR_CHUNK_BYTES - w->current_len, n = len < room ? len : room;
    memcpy(w->current + w->current_len, data, n);
    w->current_len += (uint32_t)n;
    data += n;
    len -= n;
    if (w->current_len == SR_CHUNK_BYTES && push_current(w)) return -1;
  }
  return 0;
}

void srw_output_clear(sr_webp *w) {
  sr_chunk_list_free(&w->output);
  free(w->current);
  w->current = NULL;
  w->current_len = 0;
}

EMSCRIPTEN_KEEPALIVE void sr_webp_destroy(sr_webp *w) {
  if (!w) return;
  close_all(w);
  srw_enc_destroy(w->enc);
  srw_output_clear(w);
  if (w->jpeg) sr_job_destroy(w->jpeg);
  free(w);
}

EMSCRIPTEN_KEEPALIVE const char *sr_webp_message(sr_webp *w) { return w->message; }

/* Reads the features (size, alpha, lossy or lossless, animation) from the headers; 0 or -1. */
EMSCRIPTEN_KEEPALIVE int32_t *sr_webp_info(sr_webp *w) {
  WebPBitstreamFeatures f;
  VP8StatusCode status = WebPGetFeatures(w->input, w->input_len, &f);
  if (status != VP8_STATUS_OK) {
    strncpy(w->message, status == VP8_STATUS_NOT_ENOUGH_DATA ? "the WebP is truncated inside its headers" : "the WebP headers are invalid",
            sizeof(w->message) - 1);
    return NULL;
  }
  w->info[SRW_INFO_WIDTH] = f.width;
  w->info[SRW_INFO_HEIGHT] = f.height;
  w->info[SRW_INFO_ALPHA] = f.has_alpha;
  w->info[SRW_INFO_FORMAT] = f.format;
  w->info[SRW_INFO_ANIMATED] = f.has_animation;
  return w->info;
}

static const char *status_message(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory in the WebP decoder";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "the WebP uses a feature the decoder does not support";
    case VP8_STATUS_NOT_ENOUGH_DATA:
    case VP8_STATUS_SUSPENDED: return "the WebP is truncated: its image data ends early";
    default: return "the WebP image data is corrupt";
  }
}

/* Transparent pixels onto white, for JPEG output. */
static void flatten(const uint8_t *rgba, uint8_t *rgb, int width) {
  for (int x = 0; x < width; x++, rgba += 4, rgb += 3) {
    const int a = rgba[3];
    for (int c = 0; c < 3; c++) rgb[c] = (uint8_t)((rgba[c] * a + 255 * (255 - a) + 127) / 255);
  }
}

/* Where a run's rows go after decoding: flattening, the resampler (alpha-weighted for RGBA), the sink. */
typedef struct {
  int in_w, out_w, flattening;
  size_t in_bytes;
  uint8_t *row, *flat, *out;
  srw_sink sink;
  void *ctx;
  int emitted;
} run_state;

static void emit_row(sr_webp *w, run_state *r, const uint8_t *src) {
  if (r->flattening) {
    flatten(src, r->flat, r->in_w);
    src = r->flat;
  }
  if (!w->resizer) {
    r->sink(w, src, r->ctx);
    r->emitted++;
    return;
  }
  sr_resizer_push(w->resizer, src);
  while (sr_resizer_pull(w->resizer, r->out)) {
    r->sink(w, r->out, r->ctx);
    r->emitted++;
  }
}

/* Copies alpha rows from the decoder's plane into RGBA rows (opaque when the file has none). */
static void put_alpha(uint8_t *rgba, const uint8_t *a, int width) {
  for (int x = 0; x < width; x++) rgba[x * 4 + 3] = a ? a[x] : 255;
}

/* A decoding run in steps (run_begin, then run_step until it returns 1): what it carries between them. */
struct srw_run {
  run_state r;
  int in_w, in_h, alpha, lossless, out_h, done;
  uint32_t fed;
  uint8_t *row2;
  WebPUpsampleLinePairFunc upsample;
};

/*
 * One decoding run: every input row, converted to `channels` (3 flattens alpha onto white, 4 keeps
 * it), resampled to out_w × out_h, handed to `sink` in stored order. Fails through srw_fail.
 * Lossy rows are made from YUV 4:2:0 by libwebp's own fancy upsampler, as its RGB decoding does:
 * luma rows 2k-1 and 2k together, from chroma rows k-1 and k, once row 2k is ready.
 */
static void run_begin(sr_webp *w, struct srw_run *c, int out_w, int out_h, int channels, srw_sink sink, void *ctx) {
  close_run(w);
  const int in_w = w->info[SRW_INFO_WIDTH], in_h = w->info[SRW_INFO_HEIGHT];
  const int alpha = w->info[SRW_INFO_ALPHA], lossless = w->info[SRW_INFO_FORMAT] == 2;
  if (in_w < 1 || in_h < 1) srw_fail(w, "the WebP headers were not read");
  WebPInitDecoderConfig(&w->config);
  w->config.output.colorspace = lossless ? (alpha ? MODE_RGBA : MODE_RGB) : (alpha ? MODE_YUVA : MODE_YUV);
  w->idec = WebPIDecode(NULL, 0, &w->config);
  if (!w->idec) srw_fail(w, "out of memory for the WebP decoder");
  const int src_ch = alpha ? 4 : 3;
  run_state r = {in_w, out_w, alpha && channels == 3, (size_t)in_w * src_ch, NULL, NULL, NULL, sink, ctx, 0};
  const size_t conv_bytes = (size_t)in_w * 3, out_bytes = (size_t)out_w * src_ch;
  /* Two converted rows (a pair from the upsampler), a flattened row, an output row. */
  w->rows = malloc(2 * r.in_bytes + conv_bytes + out_bytes);
  if (!w->rows) srw_fail(w, "out of memory for the decoder's rows");
  r.row = w->rows;
  c->row2 = r.row + r.in_bytes;
  r.flat = c->row2 + r.in_bytes;
  r.out = r.flat + conv_bytes;
  const int ring_ch = r.flattening ? 3 : src_ch;
  if (in_w != out_w || in_h != out_h) {
    w->resizer = sr_resizer_create(in_w, in_h, out_w, out_h, ring_ch, ring_ch == 4);
    if (!w->resizer) srw_fail(w, "out of memory for the resampler");
  }
  c->upsample = NULL;
  if (!lossless) {
    WebPInitUpsamplers();
    c->upsample = WebPUpsamplers[alpha ? MODE_RGBA : MODE_RGB];
  }
  c->r = r;
  c->in_w = in_w;
  c->in_h = in_h;
  c->alpha = alpha;
  c->lossless = lossless;
  c->out_h = out_h;
  c->done = 0;
  c->fed = 0;
}

/* Gives the decoder SRW_FEED_BYTES more of the input and hands out every row it made ready; 1 once
 * every row is out (the run then closed). */
static int run_step(sr_webp *w, struct srw_run *c) {
  if (c->done >= c->in_h) {
    if (c->r.emitted != c->out_h) srw_fail(w, "the resampler produced the wrong number of rows");
    close_run(w);
    return 1;
  }
  run_state *rs = &c->r;
  const int in_w = c->in_w, in_h = c->in_h, alpha = c->alpha;
  uint8_t *row2 = c->row2;
  int done = c->done;
  uint32_t fed = c->fed;
  {
    if (fed >= w->input_len) srw_fail(w, status_message(VP8_STATUS_SUSPENDED));
    fed = w->input_len - fed > SRW_FEED_BYTES ? fed + SRW_FEED_BYTES : w->input_len;
    VP8StatusCode status = WebPIUpdate(w->idec, w->input, fed);
    if (status != VP8_STATUS_OK && status != VP8_STATUS_SUSPENDED) srw_fail(w, status_message(status));
    int last_y = 0, width = 0, height = 0, stride = 0, uv_stride = 0, a_stride = 0;
    uint8_t *y, *u = NULL, *v = NULL, *a = NULL;
    if (c->lossless) y = WebPIDecGetRGB(w->idec, &last_y, &width, &height, &stride);
    else y = WebPIDecGetYUVA(w->idec, &last_y, &u, &v, &a, &width, &height, &stride, &uv_stride, &a_stride);
    if (y) {
      if (width != in_w || height != in_h) srw_fail(w, "the WebP decodes to another size than it declares");
      if (last_y > in_h) last_y = in_h;
      if (c->lossless) {
        for (; done < last_y; done++) emit_row(w, rs, y + (size_t)done * stride);
      } else {
        WebPUpsampleLinePairFunc upsample = c->upsample;
#define Y_ROW(i) (y + (size_t)(i) * stride)
#define U_ROW(k) (u + (size_t)(k) * uv_stride)
#define V_ROW(k) (v + (size_t)(k) * uv_stride)
#define A_ROW(i) (a ? a + (size_t)(i) * a_stride : NULL)
        if (done == 0 && last_y >= 1) {
          upsample(Y_ROW(0), NULL, U_ROW(0), V_ROW(0), U_ROW(0), V_ROW(0), rs->row, NULL, in_w);
          if (alpha) put_alpha(rs->row, A_ROW(0), in_w);
          emit_row(w, rs, rs->row);
          done = 1;
        }
        for (; done + 1 < last_y; done += 2) {
          const int k = (done + 1) >> 1;
          upsample(Y_ROW(done), Y_ROW(done + 1), U_ROW(k - 1), V_ROW(k - 1), U_ROW(k), V_ROW(k), rs->row, row2, in_w);
          if (alpha) {
            put_alpha(rs->row, A_ROW(done), in_w);
            put_alpha(row2, A_ROW(done + 1), in_w);
          }
          emit_row(w, rs, rs->row);
          emit_row(w, rs, row2);
        }
        if (done == in_h - 1 && last_y == in_h) { /* the last row of an even height */
          const int k = done >> 1;
          upsample(Y_ROW(done), NULL, U_ROW(k), V_ROW(k), U_ROW(k), V_ROW(k), rs->row, NULL, in_w);
          if (alpha) put_alpha(rs->row, A_ROW(done), in_w);
          emit_row(w, rs, rs->row);
          done = in_h;
        }
#undef Y_ROW
#undef U_ROW
#undef V_ROW
#undef A_ROW
      }
    }
    if (status == VP8_STATUS_OK && done < in_h) srw_fail(w, "the WebP decoder stopped early");
  }
  c->done = done;
  c->fed = fed;
  return 0;
}

static void run_rows(sr_webp *w, int out_w, int out_h, int channels, srw_sink sink, void *ctx) {
  struct srw_run c;
  run_begin(w, &c, out_w, out_h, channels, sink, ctx);
  while (!run_step(w, &c)) {
  }
}

/* ---- Orientation: rows that arrive stored are kept in a frame and handed out upright. */

typedef struct {
  int next, width, height, channels;
  uint8_t *frame;
} frame_ctx;

static void frame_sink(sr_webp *w, const uint8_t *row, void *ctx) {
  (void)w;
  frame_ctx *f = ctx;
  const size_t bytes = (size_t)f->width * f->channels;
  if (f->next < f->height) memcpy(f->frame + (size_t)f->next * bytes, row, bytes);
  f->next++;
}

/* Runs the rows at out_w × out_h (stored) and hands them to sink upright, through a frame when the
 * orientation needs every row first. Fails through srw_fail. */
static void run_upright(sr_webp *w, int out_w, int out_h, int orientation, int channels, srw_sink sink, void *ctx) {
  if (orientation == 1) {
    run_rows(w, out_w, out_h, channels, sink, ctx);
    return;
  }
  const int ch = channels == 3 || !w->info[SRW_INFO_ALPHA] ? 3 : 4;
  /* Held by the job, so that any failure on the way frees them (close_all). */
  w->upright_frame = malloc((size_t)out_w * out_h * ch);
  w->upright_row = malloc((size_t)(out_w > out_h ? out_w : out_h) * ch);
  if (!w->upright_frame || !w->upright_row) srw_fail(w, "out of memory for the image");
  frame_ctx f = {0, out_w, out_h, ch, w->upright_frame};
  run_rows(w, out_w, out_h, channels, frame_sink, &f);
  const int height = orientation >= 5 ? out_w : out_h;
  for (int y = 0; y < height; y++) {
    sr_upright_row(f.frame, out_w, out_h, ch, orientation, y, w->upright_row);
    sink(w, w->upright_row, ctx);
  }
  close_all(w);
}

/* ---- WebP output. */

static void enc_sink(sr_webp *w, const uint8_t *row, void *ctx) {
  (void)ctx;
  if (srw_enc_row(w->enc, row)) srw_fail(w, "out of memory for the WebP picture");
}

/* Rows of the stored frame (pull_w × pull_h), while a turned fill or pull decodes into it. */
static void fill_frame_sink(sr_webp *w, const uint8_t *row, void *ctx) {
  (void)ctx;
  const size_t bytes = (size_t)w->pull_w * (w->info[SRW_INFO_ALPHA] ? 4 : 3);
  if (w->frame_next < w->pull_h) memcpy(w->upright_frame + (size_t)w->frame_next * bytes, row, bytes);
  w->frame_next++;
}

/*
 * Starts decoding into the encoder's picture at out_w × out_h (stored size; the picture is upright), alpha
 * kept when the input has it, ARGB for lossless output and YUV(A) 4:2:0 for lossy; sr_webp_fill_step does
 * the rest, so the caller can give way between steps. An orientation other than 1 decodes into a stored
 * frame first, then hands its rows over turned. 0 or -1.
 */
EMSCRIPTEN_KEEPALIVE int sr_webp_fill_begin(sr_webp *w, int out_w, int out_h, int orientation, int lossless) {
  TRY(w);
  close_all(w);
  srw_enc_destroy(w->enc);
  w->enc = NULL;
  if (out_w < 1 || out_h < 1 || orientation < 1 || orientation > 8) srw_fail(w, "bad output size or orientation");
  const int ch = w->info[SRW_INFO_ALPHA] ? 4 : 3;
  const int up_w = orientation >= 5 ? out_h : out_w, up_h = orientation >= 5 ? out_w : out_h;
  w->enc = srw_enc_create(up_w, up_h, ch, lossless);
  if (!w->enc) srw_fail(w, "out of memory for the WebP picture");
  w->pull_orientation = orientation;
  w->pull_w = out_w;
  w->pull_h = out_h;
  w->pull_row = 0;
  w->pull_row_bytes = out_w * ch;
  w->frame_next = 0;
  w->pull = malloc(sizeof(struct srw_run));
  if (!w->pull) srw_fail(w, "out of memory for the decoder");
  if (orientation == 1) {
    run_begin(w, w->pull, out_w, out_h, ch, enc_sink, NULL);
    return 0;
  }
  /* Held by the job, so that any failure on the way frees them (close_all). */
  w->upright_frame = malloc((size_t)out_w * out_h * ch);
  w->upright_row = malloc((size_t)(out_w > out_h ? out_w : out_h) * ch);
  if (!w->upright_frame || !w->upright_row) srw_fail(w, "out of memory for the image");
  run_begin(w, w->pull, out_w, out_h, ch, fill_frame_sink, NULL);
  return 0;
}

/* The fill's next step: SRW_FEED_BYTES more of the input decoded, or SRW_BAND_ROWS upright rows of a turned
 * frame into the picture. 1: more to do, 0: the picture is full, -1: failed. */
EMSCRIPTEN_KEEPALIVE int sr_webp_fill_step(sr_webp *w) {
  TRY(w);
  w->step_work = 0;
  if (w->pull) {
    const int before = w->pull->done, in_w = w->pull->in_w;
    const int finished = run_step(w, w->pull);
    w->step_work = (uint32_t)(w->pull->done - before) * (uint32_t)in_w;
    if (!finished) return 1;
    free(w->pull);
    w->pull = NULL;
    if (w->pull_orientation == 1) return 0;
  }
  const int o = w->pull_orientation, ch = w->info[SRW_INFO_ALPHA] ? 4 : 3;
  const int width = o >= 5 ? w->pull_h : w->pull_w, height = o >= 5 ? w->pull_w : w->pull_h;
  for (int n = 0; n < SRW_BAND_ROWS && w->pull_row < height; n++) {
    sr_upright_row(w->upright_frame, w->pull_w, w->pull_h, ch, o, w->pull_row++, w->upright_row);
    enc_sink(w, w->upright_row, NULL);
    w->step_work += (uint32_t)width;
  }
  if (w->pull_row < height) return 1;
  close_all(w);
  return 0;
}

EMSCRIPTEN_KEEPALIVE uint32_t sr_webp_step_work(sr_webp *w) { return w->step_work; }

/* The fill in one call (sr_webp_fill_begin's steps, run through). 0 or -1. */
EMSCRIPTEN_KEEPALIVE int sr_webp_fill(sr_webp *w, int out_w, int out_h, int orientation, int lossless) {
  if (sr_webp_fill_begin(w, out_w, out_h, orientation, lossless)) return -1;
  int more;
  while ((more = sr_webp_fill_step(w)) == 1) continue;
  return more;
}

/* Encodes the filled picture (lossy at quality, or lossless with quality as effort) into the output;
 * low_memory and token_growth as srw_enc_finish (sr_webp_enc.c) takes them. */
EMSCRIPTEN_KEEPALIVE int sr_webp_encode(sr_webp *w, int quality, int lossless, int method, int low_memory, uint32_t token_growth) {
  if (!w->enc) {
    strncpy(w->message, "the WebP picture is not filled", sizeof(w->message) - 1);
    return -1;
  }
  const char *error;
  if (srw_enc_finish(w->enc, w, quality, lossless, method, low_memory, token_growth, &error)) {
    strncpy(w->message, error, sizeof(w->message) - 1);
    return -1;
  }
  return 0;
}

/* Frees the picture once the caller has its result. */
EMSCRIPTEN_KEEPALIVE void sr_webp_free_picture(sr_webp *w) {
  srw_enc_destroy(w->enc);
  w->enc = NULL;
}

/* ---- WebP output of a JPEG: the JPEG job's pipeline rows go into the band-fed encoder, so the
 * picture (YUV 4:2:0 for lossy) is the only whole-image buffer; an orientation other than 1 fills
 * the JPEG job's frame once and hands its rows over turned. */

static void jpeg_row_to_picture(sr_job *job, uint8_t *row, void *ctx) {
  sr_webp *w = ctx;
  const uint8_t *rgb = row;
  if (job->channels == 1) {
    const int width = w->enc_width;
    for (int x = 0; x < width; x++) w->rows[x * 3] = w->rows[x * 3 + 1] = w->rows[x * 3 + 2] = row[x];
    rgb = w->rows;
  }
  if (srw_enc_row(w->enc, rgb)) sr_fail(job, "out of memory for the WebP picture");
}

/* A failure in the JPEG job's run: what it left is closed and the message is this job's. */
static void fill_failed(sr_webp *w, sr_job *job) {
  sr_job_cleanup(job);
  sr_job_free_frame(job);
  close_all(w);
  strncpy(w->message, job->err.message, sizeof(w->message) - 1);
}

#define TRY_JPEG(w, job) \
  if (setjmp((job)->err.jump)) { \
    fill_failed(w, job); \
    return -1; \
  }

/*
 * Starts filling this job's picture (a job without input) from a JPEG job whose pixels are set
 * (sr_job_set_pixels): ARGB for lossless output, YUV 4:2:0 for lossy. An orientation other than 1
 * reads the JPEG job's frame, filled here unless the caller filled it (in steps). Under the JPEG job's setjmp.
 */
static void fill_begin(sr_webp *w, sr_job *job, int lossless) {
  const int ow = job->out_w, oh = job->out_h, o = job->orientation;
  const int up_w = o >= 5 ? oh : ow, up_h = o >= 5 ? ow : oh;
  w->enc_width = up_w;
  w->enc = srw_enc_create(up_w, up_h, 3, lossless);
  /* A widened grey row, and one upright row. */
  w->rows = malloc((size_t)up_w * 3 * 2);
  if (!w->enc || !w->rows) sr_fail(job, "out of memory for the WebP picture");
  w->fill_row = 0;
  if (o == 1) sr_run_open(job);
  else sr_frame_fill(job);
}

/* Up to max_rows rows into the picture; 1 once every row is in (the JPEG job's run or frame then freed). */
static int fill_step(sr_webp *w, sr_job *job, int max_rows) {
  const int o = job->orientation;
  const int up_w = w->enc_width, up_h = o >= 5 ? job->out_w : job->out_h;
  job->step_work = 0;
  for (int n = 0; n < max_rows; n++) {
    if (o == 1) {
      uint8_t *row = sr_run_next(job);
      if (!row) {
        sr_run_close(job);
        break;
      }
      jpeg_row_to_picture(job, row, w);
    } else {
      if (w->fill_row == up_h) {
        sr_job_free_frame(job);
        break;
      }
      uint8_t *upright = w->rows + (size_t)up_w * 3;
      sr_upright_row(job->frame, job->out_w, job->out_h, job->channels, o, w->fill_row++, upright);
      jpeg_row_to_picture(job, upright, w);
    }
    job->step_work += (uint32_t)up_w;
    if (n + 1 == max_rows) return 0;
  }
  free(w->rows);
  w->rows = NULL;
  return 1;
}

/* Fills the picture in one call (see fill_begin). Failures take the JPEG job's message. 0 or -1. */
EMSCRIPTEN_KEEPALIVE int sr_webp_fill_from_jpeg(sr_webp *w, sr_job *job, int lossless) {
  srw_enc_destroy(w->enc);
  w->enc = NULL;
  TRY_JPEG(w, job);
  fill_begin(w, job, lossless);
  while (!fill_step(w, job, INT_MAX)) continue;
  return 0;
}

/* The same in steps, so the caller can give way between them: begin (0 or -1), then step until it returns 0 (1: more, -1: failed). */
EMSCRIPTEN_KEEPALIVE int sr_webp_fill_from_jpeg_begin(sr_webp *w, sr_job *job, int lossless) {
  srw_enc_destroy(w->enc);
  w->enc = NULL;
  TRY_JPEG(w, job);
  fill_begin(w, job, lossless);
  return 0;
}

EMSCRIPTEN_KEEPALIVE int sr_webp_fill_from_jpeg_step(sr_webp *w, sr_job *job, int max_rows) {
  TRY_JPEG(w, job);
  return fill_step(w, job, max_rows) ? 0 : 1;
}

/* ---- Rows pulled by a caller outside the engine that awaits between batches (PNG output): upright,
 * RGB or RGBA as the input has alpha. Orientation 1 streams: each step's rows wait in a small queue
 * until pulled; any other orientation fills the upright frame once and reads it turned. */

static void pending_sink(sr_webp *w, const uint8_t *row, void *ctx) {
  (void)ctx;
  const size_t bytes = (size_t)w->pull_row_bytes;
  if (w->pending_len + bytes > w->pending_cap) {
    const size_t cap = (w->pending_len + bytes) * 2;
    uint8_t *grown = realloc(w->pending, cap);
    if (!grown) srw_fail(w, "out of memory for the decoder's rows");
    w->pending = grown;
    w->pending_cap = cap;
  }
  memcpy(w->pending + w->pending_len, row, bytes);
  w->pending_len += bytes;
}

/* A run of rows at out_w × out_h (stored) whose steps' rows wait in the pending queue (pull_row_bytes each). */
static void queue_open(sr_webp *w, int out_w, int out_h, int channels) {
  w->pull = malloc(sizeof(struct srw_run));
  if (!w->pull) srw_fail(w, "out of memory for the decoder");
  run_begin(w, w->pull, out_w, out_h, channels, pending_sink, NULL);
}

/* The queue's next row, stepping the run when it is empty; NULL once every row is out (the run closed).
 * Valid until the next call. */
static const uint8_t *queue_next(sr_webp *w) {
  for (;;) {
    if (w->pending_at < w->pending_len) {
      const uint8_t *row = w->pending + w->pending_at;
      w->pending_at += (size_t)w->pull_row_bytes;
      return row;
    }
    w->pending_at = w->pending_len = 0;
    if (!w->pull || run_step(w, w->pull)) {
      free(w->pull);
      w->pull = NULL;
      return NULL;
    }
  }
}

EMSCRIPTEN_KEEPALIVE int sr_webp_pull_begin(sr_webp *w, int out_w, int out_h, int orientation) {
  TRY(w);
  close_all(w);
  if (out_w < 1 || out_h < 1 || orientation < 1 || orientation > 8) srw_fail(w, "bad output size or orientation");
  const int ch = w->info[SRW_INFO_ALPHA] ? 4 : 3;
  w->pull_orientation = orientation;
  w->pull_w = out_w;
  w->pull_h = out_h;
  w->pull_row = 0;
  w->pull_row_bytes = (orientation >= 5 ? out_h : out_w) * ch;
  if (orientation == 1) {
    queue_open(w, out_w, out_h, ch);
  } else {
    /* The frame is decoded by the first pulls, a step each (sr_webp_pull answers SRW_PULL_AGAIN). */
    w->upright_frame = malloc((size_t)out_w * out_h * ch);
    if (!w->upright_frame) srw_fail(w, "out of memory for the image");
    w->frame_next = 0;
    w->pull = malloc(sizeof(struct srw_run));
    if (!w->pull) srw_fail(w, "out of memory for the decoder");
    run_begin(w, w->pull, out_w, out_h, ch, fill_frame_sink, NULL);
  }
  return 0;
}

/*
 * Writes up to `max` upright rows to out; the count (0 once every row is out), or -1. Turned, while the
 * frame is being decoded: one step of it (SRW_FEED_BYTES of the input), and SRW_PULL_AGAIN.
 */
EMSCRIPTEN_KEEPALIVE int sr_webp_pull(sr_webp *w, uint8_t *out, int max) {
  TRY(w);
  const size_t bytes = (size_t)w->pull_row_bytes;
  const int o = w->pull_orientation, height = o >= 5 ? w->pull_w : w->pull_h;
  w->step_work = 0;
  if (o != 1 && w->pull) {
    const int before = w->pull->done, in_w = w->pull->in_w;
    if (run_step(w, w->pull)) {
      free(w->pull);
      w->pull = NULL;
    } else {
      w->step_work = (uint32_t)(w->pull->done - before) * (uint32_t)in_w;
    }
    return SRW_PULL_AGAIN;
  }
  int n = 0;
  while (n < max) {
    if (o != 1) {
      if (!w->upright_frame || w->pull_row >= height) break;
      sr_upright_row(w->upright_frame, w->pull_w, w->pull_h, (int)bytes / (o >= 5 ? w->pull_h : w->pull_w), o, w->pull_row++, out + (size_t)n++ * bytes);
      continue;
    }
    const uint8_t *row = queue_next(w);
    if (!row) break;
    memcpy(out + (size_t)n++ * bytes, row, bytes);
  }
  if (n == 0) close_all(w);
  return n;
}

/* ---- Frames for whole-image encoders (PNG output): RGB or RGBA, upright. */

typedef struct {
  int next;
  size_t bytes;
  uint8_t *frame;
} copy_ctx;

static void copy_sink(sr_webp *w, const uint8_t *row, void *ctx) {
  (void)w;
  copy_ctx *c = ctx;
  memcpy(c->frame + (size_t)c->next++ * c->bytes, row, c->bytes);
}

/* Decodes into a new frame (upright, 3 or 4 channels as the input has alpha) returned to the caller,
 * who frees it with free(); NULL on failure. */
EMSCRIPTEN_KEEPALIVE uint8_t *sr_webp_frame(sr_webp *w, int out_w, int out_h, int orientation) {
  const int ch = w->info[SRW_INFO_ALPHA] ? 4 : 3;
  copy_ctx c = {0, (size_t)(orientation >= 5 ? out_h : out_w) * ch, malloc((size_t)out_w * out_h * ch)};
  if (setjmp(w->jump)) {
    close_all(w);
    free(c.frame);
    return NULL;
  }
  if (!c.frame) srw_fail(w, "out of memory for the image");
  run_upright(w, out_w, out_h, orientation, ch, copy_sink, &c);
  return c.frame;
}

/* ---- JPEG output: a JPEG job whose runs pull their rows from this decoder (RGB, alpha flattened onto
 * white, as stored), a row at a time, so the JPEG job's encode and frame fill run in steps over them.
 * Inside these, a failure of ours fails the JPEG job (srw_fail, in_jpeg_run). */

static void jpeg_source_open(sr_job *job) {
  sr_webp *w = job->source_ctx;
  w->in_jpeg_run = 1;
  close_all(w);
  w->pull_row_bytes = job->out_w * 3;
  queue_open(w, job->out_w, job->out_h, 3);
  w->in_jpeg_run = 0;
}

static uint8_t *jpeg_source_next(sr_job *job) {
  sr_webp *w = job->source_ctx;
  w->in_jpeg_run = 1;
  const uint8_t *row = queue_next(w);
  w->in_jpeg_run = 0;
  return (uint8_t *)row;
}

static void jpeg_source_close(sr_job *job) { close_all(job->source_ctx); }

static const sr_row_source jpeg_source = {jpeg_source_open, jpeg_source_next, jpeg_source_close};

/*
 * The JPEG job (sr_jpeg.h) that encodes this WebP at out_w × out_h (stored) in `orientation`: RGB,
 * alpha flattened onto white. Owned by this job; NULL when out of memory.
 */
EMSCRIPTEN_KEEPALIVE sr_job *sr_webp_jpeg_job(sr_webp *w, int out_w, int out_h, int orientation) {
  if (out_w < 1 || out_h < 1 || orientation < 1 || orientation > 8) return NULL;
  if (!w->jpeg) w->jpeg = sr_job_create(NULL, 0);
  if (!w->jpeg) return NULL;
  w->jpeg->out_w = out_w;
  w->jpeg->out_h = out_h;
  w->jpeg->channels = 3;
  w->jpeg->orientation = orientation;
  w->jpeg->scale_num = 8;
  w->jpeg->source = &jpeg_source;
  w->jpeg->source_ctx = w;
  return w->jpeg;
}

/* A failed JPEG run unwinds past jpeg_source: the next call must not think it is still inside one. */
EMSCRIPTEN_KEEPALIVE void sr_webp_after_jpeg(sr_webp *w) {
  w->in_jpeg_run = 0;
  close_all(w);
}

EMSCRIPTEN_KEEPALIVE int sr_webp_chunk_count(sr_webp *w) { return w->output.count; }
EMSCRIPTEN_KEEPALIVE int sr_webp_chunk(sr_webp *w, int i, int32_t *out) { return sr_chunk_list_get(&w->output, i, out); }
EMSCRIPTEN_KEEPALIVE uint32_t sr_webp_output_len(sr_webp *w) { return w->output.len; }
EMSCRIPTEN_KEEPALIVE int sr_webp_result_width(sr_webp *w) { return w->result_w; }
EMSCRIPTEN_KEEPALIVE int sr_webp_result_height(sr_webp *w) { return w->result_h; }
EMSCRIPTEN_KEEPALIVE int sr_webp_result_low_memory(sr_webp *w) { return w->result_low_memory; }
EMSCRIPTEN_KEEPALIVE void sr_webp_clear_output(sr_webp *w) { srw_output_clear(w); }

/* ---- The row-fed encoder on its own, for other decoders (PNG input with format=webp): a job
 * without input, created with sr_webp_create(NULL, 0). */

EMSCRIPTEN_KEEPALIVE int sr_webp_rows_begin(sr_webp *w, int width, int height, int channels, int lossless) {
  srw_enc_destroy(w->enc);
  w->enc = srw_enc_create(width, height, channels, lossless);
  if (!w->enc) {
    strncpy(w->message, "out of memory for the WebP picture, or a bad size", sizeof(w->message) - 1);
    return -1;
  }
  return 0;
}

/* Takes `count` rows of width × channels bytes each, contiguous. */
EMSCRIPTEN_KEEPALIVE int sr_webp_rows_push(sr_webp *w, const uint8_t *rows, int count, int row_bytes) {
  for (int i = 0; i < count; i++) {
    if (!w->enc || srw_enc_row(w->enc, rows + (size_t)i * row_bytes)) {
      strncpy(w->message, "the WebP picture took more rows than its height, or ran out of memory", sizeof(w->message) - 1);
      return -1;
    }
  }
  return 0;
}
