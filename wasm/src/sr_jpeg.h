/*
 * Shrinkray's JPEG engine: plain C functions over caller-owned buffers, exported from WebAssembly.
 * One job holds one input JPEG and everything a request makes from it. Every exported function that
 * reaches libjpeg sets its own setjmp target on the job's error manager, so a corrupt file unwinds to
 * that function and returns -1 with the library's message in the job; nothing ever calls exit().
 */
#ifndef SR_JPEG_H
#define SR_JPEG_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jpeglib.h"

/* Output leaves the encoder in chunks of this size, so it is never copied into a doubling buffer. */
#define SR_CHUNK_BYTES (64 * 1024)
/* Most markers (APP1 EXIF/XMP, APP2 ICC chunks) a job will write into its output. */
#define SR_MAX_MARKERS 64

/* The fields of sr_job_info(), in order. */
enum {
  SR_INFO_WIDTH, SR_INFO_HEIGHT, SR_INFO_COMPONENTS, SR_INFO_COLOR_SPACE, SR_INFO_PROGRESSIVE,
  SR_INFO_MAX_H, SR_INFO_MAX_V,
  SR_INFO_SAMP, /* 4 components × (h, v): 8 fields */
  SR_INFO_ADOBE = SR_INFO_SAMP + 8, SR_INFO_ADOBE_TRANSFORM, SR_INFO_MARKERS, SR_INFO_PRECISION,
  SR_INFO_ARITHMETIC,
  SR_INFO_LEN
};

/* Encoder modes, from the most memory and the fewest bytes to the least memory. */
enum {
  SR_MODE_PROGRESSIVE = 0, /* progressive scans, optimised Huffman: a whole-image coefficient buffer */
  SR_MODE_TWO_PASS = 1,    /* baseline, optimised Huffman from a first statistics pass: rows only */
  SR_MODE_STREAM = 2       /* baseline, the standard Huffman tables: rows only, one pass */
};

typedef struct {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  int fatal_warnings; /* warnings that mean the pixels are wrong: truncation, bad entropy data */
  int warnings;
  char message[JMSG_LENGTH_MAX];
} sr_error;

typedef struct {
  uint8_t *data;
  uint32_t len;
} sr_chunk;

/* An encoder's output: its chunks in order and their summed length. The JPEG job and the WebP engine each
 * keep one and hand it out through the same accessors (sr_io.c). */
typedef struct {
  sr_chunk *chunks;
  int count, cap;
  uint32_t len;
} sr_chunk_list;

typedef struct {
  int code;
  uint8_t *data;
  uint32_t len;
} sr_marker;

typedef struct sr_resizer sr_resizer;
/* A box of pixels: its top-left corner and size. */
typedef struct {
  int x, y, w, h;
} sr_box;
typedef struct sr_job sr_job;
/* A row sink of the pipeline: each output row, as stored. */
typedef void (*sr_row_sink)(sr_job *, uint8_t *, void *);
/* Another decoder's rows as a run (sr_run_open / sr_run_next / sr_run_close call these in place of
 * decoding the JPEG input): open, the next row (NULL once every row is out), close. */
typedef struct {
  void (*open)(sr_job *);
  uint8_t *(*next)(sr_job *);
  void (*close)(sr_job *);
} sr_row_source;

struct sr_job {
  sr_error err;
  const uint8_t *input;
  uint32_t input_len;
  int32_t info[SR_INFO_LEN];
  /* Header decoder kept open while the caller reads the saved markers. */
  struct jpeg_decompress_struct header;
  int header_open;
  /* Pixel pipeline: decode at scale_num/8, resample to out_w × out_h (stored orientation). */
  int scale_num;
  int out_w, out_h, channels, orientation;
  uint8_t *frame; /* out_w × out_h × channels, when the rows must be kept (orientation, PNG/WebP, retries) */
  /* The input's quantisation tables (natural order): luma's, and the finer of the two chroma tables';
   * input_q_ok when the header had them and the input is 8-bit grey or YCbCr (sr_align_tables), which
   * then checks once (input_q_checked) that no table is defined after the first scan, from
   * input_q_after (where the header ended). */
  uint16_t input_q[2][DCTSIZE2];
  int input_q_ok, input_q_checked;
  uint32_t input_q_after;
  /* Encoder settings. */
  int quality, subsample, mode;
  sr_marker markers[SR_MAX_MARKERS];
  int marker_count;
  /* What a run has open, so that an error path can close it (sr_job_cleanup). */
  struct jpeg_decompress_struct dec;
  int dec_open;
  struct jpeg_compress_struct enc;
  int enc_open;
  sr_resizer *resizer;
  uint8_t *rows; /* scratch rows of a run */
  int rows_decoded; /* rows the last JPEG decoding run produced at its scale, where it finished or stopped */
  uint8_t *enc_row; /* one output row, for mirrored and re-oriented rows */
  /* Output of the last encode. */
  sr_chunk_list output;
  int result_w, result_h;
  /* Rows from another decoder (the WebP engine, sr_webp.c) instead of the JPEG input: when set, a run
   * pulls them from it, a row at a time like the JPEG decoder's (so an encode of them runs in steps too),
   * and it must hand out exactly out_w × out_h rows of `channels`, as stored. It fails with sr_fail(). */
  const sr_row_source *source;
  void *source_ctx;
  /* The decoding run in progress (sr_job.c): CMYK input, its converted row, the resampled row; and the
   * next upright row a puller (sr_job_pull) gets. */
  int run_cmyk;
  uint8_t *run_scaled, *run_out;
  /* A window of the output (sr_job_set_window; w 0: all of it), as stored; and what a run decodes for
   * it: the decoded rows and columns the resampler takes (run_in, at the DCT scale), the first of
   * those columns' place in a decoded row (run_x), and the row after the last one it reads (run_end). */
  sr_box win;
  sr_box run_in;
  int run_x, run_end;
  int pull_row;
  /* An encode or a frame fill in steps (sr_encode.c), so the caller can give way between them: the
   * phase, whether its pass has started, its next row (or iMCU row of a finishing pass; -1 before the
   * pass is prepared), and the work the last step did (pixels a row, or a coefficient row, covers). */
  int step_phase, step_started, step_row;
  uint32_t step_work;
  /* A decoder reading in steps (the lossless rewrite's coefficients) suspends when its source reaches
   * this offset of the input; 0: no limit. */
  uint32_t feed_limit;
  /* The lossless rewrite in steps: its transform (a jpeg_transform_info, transupp.h) and the
   * coefficients read, and the output's orientation and mode. */
  void *xf;
  int xf_orientation, xf_progressive;
};

/* Closes whatever a run left open; a run that failed unwinds to its entry point, which calls this. */
void sr_job_cleanup(sr_job *job);
/* Fails the job with a message of ours (unwinds to the entry point). */
void sr_fail(sr_job *job, const char *message);

/* Decodes in rows and calls sink with each output row, as stored (sr_job.c). */
void sr_pipeline_run(sr_job *job, sr_row_sink sink, void *ctx);
void sr_write_markers(sr_job *job, j_compress_ptr c);
void sr_open_decoder(sr_job *job, j_decompress_ptr d);
/* After jpeg_read_header: fails the job when the input's remaining bytes cannot hold the blocks its
 * frame declares (Huffman-coded files; sr_job.c says why the bound holds). */
void sr_check_data_length(sr_job *job, j_decompress_ptr d);
/* Row y of the upright image from a stored frame (w × h, ch bytes a pixel) in EXIF orientation o. */
void sr_upright_row(const uint8_t *frame, int w, int h, int ch, int o, int y, uint8_t *out);
/* Fills the job's frame (out_w × out_h × channels, as stored) unless it is there already. */
void sr_frame_fill(sr_job *job);
/* Fills the frame in steps of at most max_rows rows: 1 once the frame is whole (sr_job.c). */
int sr_frame_fill_step(sr_job *job, int max_rows);
/* A decoding run in steps (sr_job.c): open, the next output row as stored (NULL at the end), close. */
void sr_run_open(sr_job *job);
uint8_t *sr_run_next(sr_job *job);
void sr_run_close(sr_job *job);

/* Error manager shared by the job's decoders and encoders (sr_io.c). */
void sr_error_init(sr_job *job, struct jpeg_error_mgr **slot);
/* Destinations (sr_io.c): output as a list of chunks in the job, or nowhere (a statistics pass). */
void sr_dest_chunks(j_compress_ptr cinfo, sr_job *job);
void sr_dest_null(j_compress_ptr cinfo);
void sr_chunks_clear(sr_job *job);
/* Chunk lists: appends a full chunk, which the list then owns (-1 when the list cannot grow); frees every
 * chunk and the list itself; writes chunk `index`'s address and length to out[0], out[1] (-1 past the end). */
int sr_chunk_list_push(sr_chunk_list *list, uint8_t *data, uint32_t len);
void sr_chunk_list_free(sr_chunk_list *list);
int sr_chunk_list_get(const sr_chunk_list *list, int index, int32_t *out);

/* Quantisation tables at a quality, and the progressive scan script (sr_quality.c). */
void sr_set_quality(j_compress_ptr c, int quality);
/* Raises each step of the encoder's tables to at least the input's where the output's blocks are the
 * input's blocks (a JPEG re-encoded at full size with the same sampling, in any EXIF orientation whose
 * mirrored axes are whole MCUs); after the sampling is set and before the first pass. */
void sr_align_tables(sr_job *job, j_compress_ptr c);
void sr_progression(j_compress_ptr c);

/* Trellis quantisation (sr_trellis.c): prepare reads the standard AC code lengths from a compress
 * object fresh from jpeg_set_defaults and turns it on for the job's encoder; off until the next one. */
void sr_trellis_prepare(j_compress_ptr c);
void sr_trellis_off(void);
/* The λ bases (thousandths of a step² per bit; chroma's 0: luma's), the energy knee, and the λ the
 * flattest blocks go without (thousandths) with the energy from which they have it all, for the next
 * encode: the quality's. */
void sr_trellis_lambda(int base_milli, int knee, int chroma_milli, int flat_milli, int flat_knee);
/* Adaptive quantisation (sr_aq.c): the per-block zeroing threshold the trellis applies, from the forward
 * DCT (patches/02-jcdctmgr-trellis.patch). */
float sr_aq_block(j_compress_ptr c, jpeg_component_info *comp, JSAMPARRAY rows, JDIMENSION start_row,
                  JDIMENSION start_col);
float sr_aq_rise(float z, int chroma);
float sr_aq_gate(float z);

/* Separable Lanczos3 through a ring of rows (sr_resize.c); `premultiply` (RGBA only) weights colour by
 * alpha while resampling, so transparent pixels do not bleed their hidden colour into visible ones. */
sr_resizer *sr_resizer_create(int in_w, int in_h, int out_w, int out_h, int channels, int premultiply);
/* A window of the in_w × in_h → out_w × out_h resample: only the outputs in `out`, from the inputs in
 * `in` (rows of in->w pixels from column in->x, rows in->y onwards), with the whole resample's weights,
 * so its pixels are the whole one's. `in` must hold every input `out` takes (sr_resize_span). */
sr_resizer *sr_resizer_create_box(int in_w, int in_h, int out_w, int out_h, int channels, int premultiply,
                                  const sr_box *out, const sr_box *in);
/* The inputs [*i0, *i1) that outputs [o0, o1) of an in_n → out_n resample take. */
void sr_resize_span(int in_n, int out_n, int o0, int o1, int *i0, int *i1);
void sr_resizer_destroy(sr_resizer *rs);
/* Takes the next input row. */
void sr_resizer_push(sr_resizer *rs, const uint8_t *row);
/* Writes the next output row when all its input rows have arrived; 1 if it did, 0 if not yet. */
int sr_resizer_pull(sr_resizer *rs, uint8_t *row);

#endif
