/*
 * Encoding: the pipeline's rows (or the kept frame, in any EXIF orientation) into a JPEG, in one of
 * three modes by memory (sr_jpeg.h), and the lossless transcode (coefficients copied, orientation
 * applied on the DCT blocks, Huffman optimised).
 */
#define JPEG_INTERNALS /* the two-pass mode switches the entropy encoder into its statistics mode */
#include <emscripten.h>
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

static void encode_pass(sr_job *job, int gather) {
  j_compress_ptr c = &job->enc;
  if (gather) sr_dest_null(c);
  else sr_dest_chunks(c, job);
  jpeg_start_compress(c, TRUE);
  /* The statistics pass: the Huffman encoder only counts symbols, and at the end of the pass builds
   * optimal tables into the compress object, where the writing pass finds them. */
  if (gather) (*c->entropy->start_pass)(c, TRUE);
  else sr_write_markers(job, c);
  if (job->frame) {
    const int height = upright_height(job);
    for (int y = 0; y < height; y++) {
      if (job->orientation == 1) {
        write_row(job, job->frame + (size_t)y * job->out_w * job->channels);
      } else {
        oriented_row(job, y, job->enc_row);
        write_row(job, job->enc_row);
      }
    }
  } else {
    sr_pipeline_run(job, encode_sink, NULL);
  }
  jpeg_finish_compress(c);
}

/*
 * Encodes the job's pixels (its frame when there is one, else straight from the decoder) at the given
 * quality; subsample 1 = 4:2:0, 0 = 4:4:4. Orientations 3-8 need every row first, so they fill the frame.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_encode(sr_job *job, int quality, int subsample, int mode) {
  TRY(job);
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
  if (mode == SR_MODE_TWO_PASS) encode_pass(job, 1);
  encode_pass(job, 0);
  job->result_w = width;
  job->result_h = height;
  sr_job_cleanup(job);
  return 0;
}

/* EXIF orientation → the lossless transform that turns the stored image upright. */
static const JXFORM_CODE TRANSFORMS[9] = {
  JXFORM_NONE, JXFORM_NONE, JXFORM_FLIP_H, JXFORM_ROT_180, JXFORM_FLIP_V,
  JXFORM_TRANSPOSE, JXFORM_ROT_90, JXFORM_TRANSVERSE, JXFORM_ROT_270,
};

/*
 * The lossless rewrite: DCT coefficients copied, orientation applied on the blocks (partial edge blocks
 * that cannot move are trimmed, as jpegtran -trim does), Huffman tables optimised, progressive when
 * asked; only the queued markers are written.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_transcode(sr_job *job, int orientation, int progressive) {
  TRY(job);
  if (orientation < 1 || orientation > 8) sr_fail(job, "orientation must be 1 to 8");
  sr_chunks_clear(job);
  j_decompress_ptr s = &job->dec;
  sr_open_decoder(job, s);
  job->dec_open = 1;
  jpeg_read_header(s, TRUE);
  sr_check_data_length(job, s);
  jpeg_transform_info xf;
  memset(&xf, 0, sizeof(xf));
  xf.transform = TRANSFORMS[orientation];
  xf.trim = TRUE;
  if (!jtransform_request_workspace(s, &xf)) sr_fail(job, "the transform cannot be applied to this JPEG");
  jvirt_barray_ptr *src_coef = jpeg_read_coefficients(s);
  if (job->err.fatal_warnings) longjmp(job->err.jump, 1);
  j_compress_ptr c = &job->enc;
  sr_error_init(job, &c->err);
  jpeg_create_compress(c);
  job->enc_open = 1;
  jpeg_copy_critical_parameters(s, c);
  jvirt_barray_ptr *dst_coef = jtransform_adjust_parameters(s, c, src_coef, &xf);
  c->optimize_coding = TRUE;
  if (progressive) sr_progression(c);
  sr_dest_chunks(c, job);
  jpeg_write_coefficients(c, dst_coef);
  sr_write_markers(job, c);
  jtransform_execute_transform(s, c, src_coef, &xf);
  jpeg_finish_compress(c);
  job->result_w = (int)c->image_width;
  job->result_h = (int)c->image_height;
  jpeg_finish_decompress(s);
  sr_job_cleanup(job);
  return 0;
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
 * the pixels. Each call sets its own setjmp: a failure in any of them closes the encoder.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_rows_begin(sr_job *job, int width, int height, int components, int quality, int h0, int v0,
                                           int progressive) {
  TRY(job);
  sr_chunks_clear(job);
  if (width < 1 || height < 1 || (components != 1 && components != 3) || h0 < 1 || h0 > 4 || v0 < 1 || v0 > 4)
    sr_fail(job, "bad row encoding parameters");
  j_compress_ptr c = open_encoder(job, width, height, components, quality);
  if (components > 1) {
    c->comp_info[0].h_samp_factor = h0;
    c->comp_info[0].v_samp_factor = v0;
  }
  if (progressive) sr_progression(c);
  c->optimize_coding = TRUE;
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
