/*
 * Encoding: the pipeline's rows (or the kept frame, in any EXIF orientation) into a JPEG, in one of
 * three modes by memory (sr_jpeg.h), and the lossless transcode (coefficients copied, orientation
 * applied on the DCT blocks, Huffman optimised).
 */
#define JPEG_INTERNALS /* the two-pass mode switches the entropy encoder into its statistics mode */
#include <emscripten.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sr_jpeg.h"
#include "transupp.h"

#define TRY(job) \
  if (setjmp((job)->err.jump)) { \
    sr_job_cleanup(job); \
    return -1; \
  }

static int upright_width(const sr_job *job) { return job->orientation >= 5 ? job->out_h : job->out_w; }
static int upright_height(const sr_job *job) { return job->orientation >= 5 ? job->out_w : job->out_h; }

/* Row y of the upright image, gathered from the stored frame (sr_job.c). */
static void oriented_row(const sr_job *job, int y, uint8_t *out) {
  sr_upright_row(job->frame, job->out_w, job->out_h, job->channels, job->orientation, y, out);
}

/*
 * Creates the job's compress object for width × height pixels of 1 (grey), 3 (RGB) or 4 (CMYK, written
 * as YCCK) components, with libjpeg's defaults and our quantisation at `quality`. Runs under the
 * caller's setjmp; the job's cleanup destroys it.
 */
static j_compress_ptr open_encoder(sr_job *job, int width, int height, int components, int quality) {
  j_compress_ptr c = &job->enc;
  sr_error_init(job, &c->err);
  jpeg_create_compress(c);
  job->enc_open = 1;
  c->image_width = (JDIMENSION)width;
  c->image_height = (JDIMENSION)height;
  c->input_components = components;
  c->in_color_space = components == 1 ? JCS_GRAYSCALE : components == 3 ? JCS_RGB : JCS_CMYK;
  jpeg_set_defaults(c);
  if (components == 4) jpeg_set_colorspace(c, JCS_YCCK);
  sr_set_quality(c, quality);
  sr_trellis_prepare(c);
  return c;
}

static void write_row(sr_job *job, uint8_t *row) {
  JSAMPROW r = row;
  jpeg_write_scanlines(&job->enc, &r, 1);
}

/* Straight from the pipeline: orientation 1 as it comes, 2 mirrored row by row. */
static void encode_sink(sr_job *job, uint8_t *row, void *ctx) {
  (void)ctx;
  if (job->orientation == 2) {
    const int w = job->out_w, ch = job->channels;
    for (int x = 0; x < w; x++) memcpy(job->enc_row + (size_t)x * ch, row + (size_t)(w - 1 - x) * ch, (size_t)ch);
    row = job->enc_row;
  }
  write_row(job, row);
}

/*
 * An encode runs in steps, so that the caller can give way to other requests between them (the
 * TypeScript side awaits wasm/give-way.ts's giveWay): each pass takes its rows a batch at a time, and
 * finishing a pass (jpeg_finish_compress: in progressive mode, every scan after the first, each a pass
 * over the whole-image coefficient buffer, twice with optimised tables) goes an iMCU row batch at a
 * time. The steps call libjpeg's functions in the order one call would, so the bytes are the same.
 */
/*
 * A pass over the coefficient buffer costs about 1/SR_SCAN_PASS_SHARE of what a row decoded, resampled
 * and encoded costs per pixel: the work a finishing step reports (step_work) is scaled by it, so that
 * give-way.ts's pixel slice (for a clock that stands still) spans about as much time in either phase.
 */
#define SR_SCAN_PASS_SHARE 8

enum { SR_STEP_GATHER_ROWS, SR_STEP_GATHER_FINISH, SR_STEP_WRITE_ROWS, SR_STEP_WRITE_FINISH, SR_STEP_DONE };

/* Starts a pass: its destination, the compressor, the statistics mode or the markers, the rows' run. */
static void pass_start(sr_job *job, int gather) {
  j_compress_ptr c = &job->enc;
  if (gather) sr_dest_null(c);
  else sr_dest_chunks(c, job);
  jpeg_start_compress(c, TRUE);
  /* The statistics pass: the Huffman encoder only counts symbols, and at the end of the pass builds
   * optimal tables into the compress object, where the writing pass finds them. */
  if (gather) (*c->entropy->start_pass)(c, TRUE);
  else sr_write_markers(job, c);
  job->step_row = 0;
  if (!job->frame) sr_run_open(job);
}

/* Up to max_rows rows into the pass; 1 once every row is in. */
static int pass_rows(sr_job *job, int max_rows) {
  const int width = upright_width(job);
  if (job->frame) {
    const int height = upright_height(job);
    for (int n = 0; n < max_rows && job->step_row < height; n++, job->step_row++) {
      if (job->orientation == 1) {
        write_row(job, job->frame + (size_t)job->step_row * job->out_w * job->channels);
      } else {
        oriented_row(job, job->step_row, job->enc_row);
        write_row(job, job->enc_row);
      }
      job->step_work += (uint32_t)width;
    }
    return job->step_row >= height;
  }
  for (int n = 0; n < max_rows; n++) {
    uint8_t *row = sr_run_next(job);
    if (!row) {
      sr_run_close(job);
      return 1;
    }
    encode_sink(job, row, NULL);
    job->step_work += (uint32_t)width;
  }
  return 0;
}

/*
 * jpeg_finish_compress (libjpeg-turbo 2.1.5, jcapimin.c) at most max_rows iMCU rows at a time: the
 * same calls in the same order, its loop over the remaining passes kept in step_row (-1: the next pass
 * is not prepared yet). 1 once the file is complete and the compressor reset.
 */
static int finish_step(sr_job *job, int max_rows) {
  j_compress_ptr c = &job->enc;
  if (job->step_row == -2) {
    if (c->global_state == CSTATE_SCANNING || c->global_state == CSTATE_RAW_OK) {
      if (c->next_scanline < c->image_height) ERREXIT(c, JERR_TOO_LITTLE_DATA);
      (*c->master->finish_pass)(c);
    } else if (c->global_state != CSTATE_WRCOEFS) {
      ERREXIT1(c, JERR_BAD_STATE, c->global_state);
    }
    job->step_row = -1;
  }
  const uint32_t row_pixels = (uint32_t)c->image_width * (uint32_t)(c->max_v_samp_factor * DCTSIZE) / SR_SCAN_PASS_SHARE;
  /* A pass under way (step_row >= 0) may be the last: prepare_for_pass set is_last_pass when it began. */
  for (int n = 0; job->step_row >= 0 || !c->master->is_last_pass;) {
    if (job->step_row < 0) {
      (*c->master->prepare_for_pass)(c);
      job->step_row = 0;
    }
    for (; job->step_row < (int)c->total_iMCU_rows; job->step_row++, n++) {
      if (n == max_rows) return 0;
      if (c->progress != NULL) {
        c->progress->pass_counter = (long)job->step_row;
        c->progress->pass_limit = (long)c->total_iMCU_rows;
        (*c->progress->progress_monitor)((j_common_ptr)c);
      }
      if (!(*c->coef->compress_data)(c, (JSAMPIMAGE)NULL)) ERREXIT(c, JERR_CANT_SUSPEND);
      job->step_work += row_pixels;
    }
    (*c->master->finish_pass)(c);
    job->step_row = -1;
  }
  (*c->marker->write_file_trailer)(c);
  (*c->dest->term_destination)(c);
  jpeg_abort((j_common_ptr)c);
  return 1;
}

/* The encode's next step under the caller's setjmp: 1 once the output is complete. */
static int encode_step(sr_job *job, int max_rows) {
  job->step_work = 0;
  switch (job->step_phase) {
    case SR_STEP_GATHER_ROWS:
    case SR_STEP_WRITE_ROWS: {
      const int gather = job->step_phase == SR_STEP_GATHER_ROWS;
      if (!job->step_started) {
        pass_start(job, gather);
        job->step_started = 1;
      }
      if (pass_rows(job, max_rows)) {
        job->step_phase++;
        job->step_row = -2; /* the finish's first step ends the pass that took the rows */
      }
      return 0;
    }
    case SR_STEP_GATHER_FINISH:
    case SR_STEP_WRITE_FINISH:
      if (!finish_step(job, max_rows)) return 0;
      job->step_started = 0;
      if (job->step_phase++ == SR_STEP_GATHER_FINISH) return 0;
      job->result_w = upright_width(job);
      job->result_h = upright_height(job);
      sr_job_cleanup(job);
      return 1;
    default:
      return 1;
  }
}

/*
 * Sets up an encode of the job's pixels (its frame when there is one, else straight from the decoder)
 * at the given quality; subsample 1 = 4:2:0, 0 = 4:4:4. Orientations 3-8 need every row first, so they
 * fill the frame (a caller giving way fills it in steps first: sr_job_fill_step). Under the caller's setjmp.
 */
static void encode_begin(sr_job *job, int quality, int subsample, int mode) {
  sr_chunks_clear(job);
  if (job->orientation >= 3) sr_frame_fill(job);
  const int width = upright_width(job), height = upright_height(job), ch = job->channels;
  job->enc_row = malloc((size_t)width * ch);
  if (!job->enc_row) sr_fail(job, "out of memory for the encoder's row");
  j_compress_ptr c = open_encoder(job, width, height, ch, quality);
  c->dct_method = JDCT_ISLOW;
  if (ch == 3) c->comp_info[0].h_samp_factor = c->comp_info[0].v_samp_factor = subsample ? 2 : 1;
  sr_align_tables(job, c);
  if (mode == SR_MODE_PROGRESSIVE) {
    sr_progression(c);
    c->optimize_coding = TRUE;
  } else {
    c->optimize_coding = FALSE;
  }
  job->step_phase = mode == SR_MODE_TWO_PASS ? SR_STEP_GATHER_ROWS : SR_STEP_WRITE_ROWS;
  job->step_started = 0;
  job->step_work = 0;
}

/* The encode in one call: every step at once. */
EMSCRIPTEN_KEEPALIVE int sr_job_encode(sr_job *job, int quality, int subsample, int mode) {
  TRY(job);
  encode_begin(job, quality, subsample, mode);
  while (!encode_step(job, INT_MAX)) continue;
  return 0;
}

/* The encode in steps: begin, then sr_job_encode_step until it returns 0 (-1: failed, the job cleaned up). */
EMSCRIPTEN_KEEPALIVE int sr_job_encode_begin(sr_job *job, int quality, int subsample, int mode) {
  TRY(job);
  encode_begin(job, quality, subsample, mode);
  return 0;
}

/* At most max_rows rows, or iMCU rows of a finishing pass: 1 more to do, 0 the output is complete, -1 failed. */
EMSCRIPTEN_KEEPALIVE int sr_job_encode_step(sr_job *job, int max_rows) {
  if (setjmp(job->err.jump)) {
    sr_job_cleanup(job);
    job->step_started = 0;
    job->step_phase = SR_STEP_DONE;
    return -1;
  }
  return encode_step(job, max_rows) ? 0 : 1;
}

/* EXIF orientation → the lossless transform that turns the stored image upright. */
static const JXFORM_CODE TRANSFORMS[9] = {
  JXFORM_NONE, JXFORM_NONE, JXFORM_FLIP_H, JXFORM_ROT_180, JXFORM_FLIP_V,
  JXFORM_TRANSPOSE, JXFORM_ROT_90, JXFORM_TRANSVERSE, JXFORM_ROT_270,
};

/*
 * The lossless rewrite: DCT coefficients copied, orientation applied on the blocks (partial edge blocks
 * that cannot move are trimmed, as jpegtran -trim does), Huffman tables optimised, progressive when
 * asked; only the queued markers are written. In steps: the coefficients are read SR_TRANSCODE_FEED_BYTES
 * of the input at a time (the decoder suspends at the step's share: sr_job.c's source), and the output's
 * passes (every scan's, twice with optimised tables) go through finish_step.
 */
#define SR_TRANSCODE_FEED_BYTES (256 * 1024)
/* Row work (give-way.ts's pixels) a step's bytes of entropy-coded data stand for: decoding them costs
 * about what a row of this many pixels decoded, resampled and encoded does. */
#define SR_TRANSCODE_WORK_PER_BYTE 2

enum { SR_XF_READ, SR_XF_FINISH };

static void transcode_begin(sr_job *job, int orientation, int progressive) {
  if (orientation < 1 || orientation > 8) sr_fail(job, "orientation must be 1 to 8");
  sr_chunks_clear(job);
  j_decompress_ptr s = &job->dec;
  sr_open_decoder(job, s);
  job->dec_open = 1;
  jpeg_read_header(s, TRUE);
  sr_check_data_length(job, s);
  jpeg_transform_info *xf = calloc(1, sizeof(jpeg_transform_info));
  if (!xf) sr_fail(job, "out of memory for the transform");
  job->xf = xf;
  xf->transform = TRANSFORMS[orientation];
  xf->trim = TRUE;
  if (!jtransform_request_workspace(s, xf)) sr_fail(job, "the transform cannot be applied to this JPEG");
  job->xf_orientation = orientation;
  job->xf_progressive = progressive;
  job->step_phase = SR_XF_READ;
  /* Arithmetic-coded data cannot suspend in libjpeg: read it whole. */
  if (!s->arith_code) job->feed_limit = (uint32_t)(s->src->next_input_byte - job->input) + SR_TRANSCODE_FEED_BYTES;
}

/* The rewrite's next step under the caller's setjmp: 1 once the output is complete. */
static int transcode_step(sr_job *job, int max_rows) {
  j_decompress_ptr s = &job->dec;
  job->step_work = 0;
  if (job->step_phase == SR_XF_READ) {
    jvirt_barray_ptr *src_coef = jpeg_read_coefficients(s);
    if (!src_coef) {
      job->feed_limit += SR_TRANSCODE_FEED_BYTES;
      job->step_work = SR_TRANSCODE_FEED_BYTES * SR_TRANSCODE_WORK_PER_BYTE;
      return 0;
    }
    job->feed_limit = 0;
    if (job->err.fatal_warnings) longjmp(job->err.jump, 1);
    jpeg_transform_info *xf = job->xf;
    j_compress_ptr c = &job->enc;
    sr_error_init(job, &c->err);
    jpeg_create_compress(c);
    job->enc_open = 1;
    jpeg_copy_critical_parameters(s, c);
    jvirt_barray_ptr *dst_coef = jtransform_adjust_parameters(s, c, src_coef, xf);
    c->optimize_coding = TRUE;
    if (job->xf_progressive) sr_progression(c);
    sr_dest_chunks(c, job);
    jpeg_write_coefficients(c, dst_coef);
    sr_write_markers(job, c);
    jtransform_execute_transform(s, c, src_coef, xf);
    job->step_phase = SR_XF_FINISH;
    job->step_row = -2;
    return 0;
  }
  if (!finish_step(job, max_rows)) return 0;
  job->result_w = (int)job->enc.image_width;
  job->result_h = (int)job->enc.image_height;
  jpeg_finish_decompress(s);
  sr_job_cleanup(job);
  return 1;
}

/* The rewrite in one call: every step at once. */
EMSCRIPTEN_KEEPALIVE int sr_job_transcode(sr_job *job, int orientation, int progressive) {
  TRY(job);
  transcode_begin(job, orientation, progressive);
  job->feed_limit = 0;
  while (!transcode_step(job, INT_MAX)) continue;
  return 0;
}

/* The rewrite in steps: begin (0 or -1), then sr_job_transcode_step until it returns 0 (1: more, -1: failed). */
EMSCRIPTEN_KEEPALIVE int sr_job_transcode_begin(sr_job *job, int orientation, int progressive) {
  TRY(job);
  transcode_begin(job, orientation, progressive);
  return 0;
}

EMSCRIPTEN_KEEPALIVE int sr_job_transcode_step(sr_job *job, int max_rows) {
  TRY(job);
  return transcode_step(job, max_rows) ? 0 : 1;
}

EMSCRIPTEN_KEEPALIVE int sr_job_chunk_count(sr_job *job) { return job->output.count; }
EMSCRIPTEN_KEEPALIVE int sr_job_chunk(sr_job *job, int i, int32_t *out) { return sr_chunk_list_get(&job->output, i, out); }
EMSCRIPTEN_KEEPALIVE uint32_t sr_job_output_len(sr_job *job) { return job->output.len; }
EMSCRIPTEN_KEEPALIVE int sr_job_result_width(sr_job *job) { return job->result_w; }
EMSCRIPTEN_KEEPALIVE int sr_job_result_height(sr_job *job) { return job->result_h; }
EMSCRIPTEN_KEEPALIVE void sr_job_clear_output(sr_job *job) { sr_chunks_clear(job); }

/*
 * Encodes caller-owned pixels (width × height × components: 1 grey, 3 RGB, 4 CMYK with Adobe's
 * inverted inks) with luma sampling h0 × v0 (chroma 1 × 1): the fixtures of every sampling and colour
 * model the decoder must read, and a plain encoder for whole images. Output goes to the job's chunks.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_encode_pixels(sr_job *job, const uint8_t *pixels, int width, int height, int components,
                                              int quality, int h0, int v0, int progressive) {
  TRY(job);
  sr_chunks_clear(job);
  if (width < 1 || height < 1 || (components != 1 && components != 3 && components != 4) || h0 < 1 || h0 > 4 || v0 < 1 ||
      v0 > 4)
    sr_fail(job, "bad pixel encoding parameters");
  j_compress_ptr c = open_encoder(job, width, height, components, quality);
  if (components > 1) {
    c->comp_info[0].h_samp_factor = h0;
    c->comp_info[0].v_samp_factor = v0;
    if (components == 4) c->comp_info[3].h_samp_factor = h0, c->comp_info[3].v_samp_factor = v0;
  }
  if (progressive) sr_progression(c);
  c->optimize_coding = TRUE;
  sr_dest_chunks(c, job);
  jpeg_start_compress(c, TRUE);
  sr_write_markers(job, c);
  const size_t stride = (size_t)width * components;
  while (c->next_scanline < c->image_height) {
    JSAMPROW row = (JSAMPROW)(pixels + c->next_scanline * stride);
    jpeg_write_scanlines(c, &row, 1);
  }
  jpeg_finish_compress(c);
  job->result_w = width;
  job->result_h = height;
  sr_job_cleanup(job);
  return 0;
}

/*
 * A JPEG written from rows the caller hands over, a batch at a time, across calls: for pixels that
 * come from a decoder outside the engine (the PNG decoder in TypeScript), so that only the encoder's
 * own state is held (with optimised Huffman tables, libjpeg's whole-image coefficient buffer), never
 * the pixels. layout 1 writes progressive scans; 2 streams a baseline file with the standard Huffman
 * tables, holding no coefficient buffer at all, for pictures whose buffer would not fit the memory plan.
 * Each call sets its own setjmp: a failure in any of them closes the encoder.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_rows_begin(sr_job *job, int width, int height, int components, int quality, int h0, int v0,
                                           int layout) {
  TRY(job);
  sr_chunks_clear(job);
  if (width < 1 || height < 1 || (components != 1 && components != 3) || h0 < 1 || h0 > 4 || v0 < 1 || v0 > 4)
    sr_fail(job, "bad row encoding parameters");
  j_compress_ptr c = open_encoder(job, width, height, components, quality);
  if (components > 1) {
    c->comp_info[0].h_samp_factor = h0;
    c->comp_info[0].v_samp_factor = v0;
  }
  if (layout == 1) sr_progression(c);
  c->optimize_coding = layout != 2;
  sr_dest_chunks(c, job);
  jpeg_start_compress(c, TRUE);
  sr_write_markers(job, c);
  job->result_w = width;
  job->result_h = height;
  return 0;
}

/* Writes `count` rows (width × components bytes each, one after another) of a job begun above. */
EMSCRIPTEN_KEEPALIVE int sr_job_rows_write(sr_job *job, const uint8_t *rows, int count) {
  TRY(job);
  if (!job->enc_open) sr_fail(job, "no row encoder is open");
  j_compress_ptr c = &job->enc;
  const size_t stride = (size_t)c->image_width * (size_t)c->input_components;
  if (count < 0 || c->next_scanline + (JDIMENSION)count > c->image_height) sr_fail(job, "more rows than the image has");
  for (int i = 0; i < count; i++) {
    JSAMPROW row = (JSAMPROW)(rows + (size_t)i * stride);
    jpeg_write_scanlines(c, &row, 1);
  }
  return 0;
}

/* Ends the file once every row is in; the output is then in the job's chunks. */
EMSCRIPTEN_KEEPALIVE int sr_job_rows_finish(sr_job *job) {
  TRY(job);
  if (!job->enc_open) sr_fail(job, "no row encoder is open");
  if (job->enc.next_scanline != job->enc.image_height) sr_fail(job, "rows missing");
  jpeg_finish_compress(&job->enc);
  sr_job_cleanup(job);
  return 0;
}

/*
 * sr_job_rows_finish in steps of at most max_rows iMCU rows (a progressive file's later scans are passes
 * over the whole image): 1 more to do, 0 the output is complete, -1 failed.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_rows_finish_step(sr_job *job, int max_rows) {
  if (setjmp(job->err.jump)) {
    sr_job_cleanup(job);
    job->step_started = 0;
    return -1;
  }
  if (!job->enc_open) sr_fail(job, "no row encoder is open");
  job->step_work = 0;
  if (!job->step_started) {
    if (job->enc.next_scanline != job->enc.image_height) sr_fail(job, "rows missing");
    job->step_started = 1;
    job->step_row = -2;
  }
  if (!finish_step(job, max_rows)) return 1;
  job->step_started = 0;
  sr_job_cleanup(job);
  return 0;
}
