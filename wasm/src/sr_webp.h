/*
 * Shrinkray's WebP engine: libwebp's incremental decoder handing out rows as they become ready, the
 * ring resampler of the JPEG engine, and libwebp's encoder fed band by band (sr_webp.c, sr_webp_enc.c).
 * JPEG output goes through a JPEG job whose row source is the WebP decoder (sr_jpeg.h, `source`).
 */
#ifndef SR_WEBP_H
#define SR_WEBP_H

#include <setjmp.h>
#include <stdint.h>

#include "sr_jpeg.h"
#include "webp/decode.h"
#include "webp/encode.h"

/* The decoder is given the input this many bytes further at a time (WebPIUpdate): rows are handed out
 * between steps, as they become ready. */
#define SRW_FEED_BYTES (64 * 1024)
/* sr_webp_pull's answer while a turned frame is still being decoded: no rows yet, call again. */
#define SRW_PULL_AGAIN (-2)
/* Rows converted to YUV at a time for the lossy encoder's picture (even, so chroma rows stay whole). */
#define SRW_BAND_ROWS 16

/* The fields of sr_webp_info(), in order. */
enum { SRW_INFO_WIDTH, SRW_INFO_HEIGHT, SRW_INFO_ALPHA, SRW_INFO_FORMAT, SRW_INFO_ANIMATED, SRW_INFO_LEN };

typedef struct sr_webp_enc sr_webp_enc;
typedef struct sr_webp sr_webp;
typedef void (*srw_sink)(sr_webp *w, const uint8_t *row, void *ctx);

struct sr_webp {
  const uint8_t *input;
  uint32_t input_len;
  int32_t info[SRW_INFO_LEN];
  char message[200];
  jmp_buf jump;
  /* A JPEG job fed by this decoder: failures inside its run unwind to the JPEG job's entry point. */
  sr_job *jpeg;
  int in_jpeg_run;
  /* One decoding run. */
  WebPDecoderConfig config;
  WebPIDecoder *idec;
  sr_resizer *resizer;
  uint8_t *rows;
  /* Orientations other than 1: the stored frame (out_w × out_h × channels) and one upright row. */
  uint8_t *upright_frame, *upright_row;
  /* The encoder being fed (WebP output), and its output. */
  sr_webp_enc *enc;
  sr_chunk_list output;
  uint8_t *current; /* the chunk being filled */
  uint32_t current_len;
  int result_w, result_h;
  /* Whether the last lossy encode ran in libwebp's low-memory mode (asked, or after the token buffer
   * outgrew its allowance). */
  int result_low_memory;
  /* The picture's width while a JPEG job fills it (sr_webp_fill_from_jpeg), and its next row from a frame. */
  int enc_width, fill_row;
  /* Rows pulled from outside (sr_webp_pull): the run in progress (orientation 1) and the rows its last
   * step made that were not pulled yet; or, turned, the upright frame and the next row. */
  struct srw_run *pull;
  uint8_t *pending;
  size_t pending_len, pending_at, pending_cap;
  int pull_orientation, pull_w, pull_h, pull_row, pull_row_bytes;
  /* A fill in steps (sr_webp_fill_step), turned: the rows of the stored frame so far. And the work (input
   * pixels decoded, or upright rows' pixels moved) the last step did, for the caller's give-way slice. */
  int frame_next;
  uint32_t step_work;
};

/* The JPEG engine's job functions (sr_job.c). */
sr_job *sr_job_create(const uint8_t *input, uint32_t len);
void sr_job_destroy(sr_job *job);
void sr_job_free_frame(sr_job *job);

/* Fails the current call with a message (unwinds to its entry point). */
void srw_fail(sr_webp *w, const char *message);
/* Appends output bytes to the chunk list. */
int srw_write(sr_webp *w, const uint8_t *data, size_t len);
void srw_output_clear(sr_webp *w);

/* The band-fed encoder (sr_webp_enc.c): a YUV(A) picture (lossy) or ARGB (lossless) of width × height. */
sr_webp_enc *srw_enc_create(int width, int height, int channels, int lossless);
void srw_enc_destroy(sr_webp_enc *e);
/* Takes the next row (channels bytes per pixel, RGB or RGBA); 0 on success. */
int srw_enc_row(sr_webp_enc *e, const uint8_t *row);
/*
 * Encodes the picture once every row has arrived; writes into w's chunks. 0 on success. Lossy with
 * low_memory 0: libwebp's token buffer; token_growth > 0 bounds how far the instance's memory may grow
 * during that encode, beyond which it is abandoned and the picture encoded again in low-memory mode.
 */
int srw_enc_finish(sr_webp_enc *e, sr_webp *w, int quality, int lossless, int method, int low_memory, uint32_t token_growth,
                   const char **error);

#endif
