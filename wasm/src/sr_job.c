/*
 * A job: one input JPEG, its header and markers, and the pixel pipeline that decodes it in rows at a
 * DCT scale, resamples through a ring of rows, and hands each output row to a sink (the encoder, or a
 * frame kept for orientations that need every row).
 */
#include <emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "sr_jpeg.h"
#include "jerror.h"

/* How far (in iMCUs, at the DCT scale) a window's decode reaches past the pixels its resampling takes,
 * so that libjpeg's crop and skip edges stay off them (sr_run_open). */
#define SR_WINDOW_MARGIN_IMCUS 1

#define TRY(job) \
  if (setjmp((job)->err.jump)) { \
    sr_job_cleanup(job); \
    return -1; \
  }

EMSCRIPTEN_KEEPALIVE sr_job *sr_job_create(const uint8_t *input, uint32_t len) {
  sr_job *job = calloc(1, sizeof(sr_job));
  if (!job) return NULL;
  job->input = input;
  job->input_len = len;
  job->scale_num = 8;
  job->orientation = 1;
  return job;
}

/* What one decoding run holds: its decoder, resampler and rows. */
static void close_run(sr_job *job) {
  if (job->dec_open) jpeg_destroy_decompress(&job->dec);
  job->dec_open = 0;
  sr_resizer_destroy(job->resizer);
  job->resizer = NULL;
  free(job->rows);
  job->rows = NULL;
}

void sr_job_cleanup(sr_job *job) {
  close_run(job);
  job->feed_limit = 0;
  free(job->xf);
  job->xf = NULL;
  if (job->enc_open) jpeg_destroy_compress(&job->enc);
  sr_trellis_off();
  free(job->enc_row);
  job->enc_row = NULL;
  if (job->header_open) jpeg_destroy_decompress(&job->header);
  job->enc_open = job->header_open = 0;
}

void sr_fail(sr_job *job, const char *message) {
  strncpy(job->err.message, message, JMSG_LENGTH_MAX - 1);
  longjmp(job->err.jump, 1);
}

EMSCRIPTEN_KEEPALIVE void sr_job_clear_markers(sr_job *job) {
  for (int i = 0; i < job->marker_count; i++) free(job->markers[i].data);
  job->marker_count = 0;
}

EMSCRIPTEN_KEEPALIVE void sr_job_free_frame(sr_job *job) {
  free(job->frame);
  job->frame = NULL;
}

EMSCRIPTEN_KEEPALIVE void sr_job_destroy(sr_job *job) {
  if (!job) return;
  sr_job_cleanup(job);
  sr_job_clear_markers(job);
  sr_job_free_frame(job);
  sr_chunks_clear(job);
  free(job);
}

EMSCRIPTEN_KEEPALIVE const char *sr_job_message(sr_job *job) { return job->err.message; }
EMSCRIPTEN_KEEPALIVE int32_t *sr_job_info(sr_job *job) { return job->info; }

/*
 * The decoder's source: the input handed over SR_SOURCE_BYTES at a time (it is in the module's memory
 * already; nothing is copied). libjpeg-turbo decodes an MCU with its fast Huffman path whenever at least
 * 512 bytes per block are buffered, and upstream that path turns an invalid code into a zero without
 * the JWRN_HUFF_BAD_CODE warning the slow path gives, so a corrupt scan decoded to wrong pixels
 * unnoticed. We fed 256 bytes at a time to stay off that path; patches/03-jdhuff-fast-bad-code.patch
 * makes the fast path warn too, so the source can hand over large blocks (decoding time measured the
 * same within noise either way).
 */
#define SR_SOURCE_BYTES (64 * 1024)

typedef struct {
  struct jpeg_source_mgr pub;
  const uint8_t *data;
  uint32_t len, pos;
  const uint32_t *limit; /* the job's feed_limit */
} sr_source;

static void source_init(j_decompress_ptr d) { (void)d; }
static void source_term(j_decompress_ptr d) { (void)d; }

static boolean source_fill(j_decompress_ptr d) {
  static const JOCTET fake_eoi[2] = {0xFF, JPEG_EOI};
  sr_source *src = (sr_source *)d->src;
  if (src->pos >= src->len) {
    WARNMS(d, JWRN_JPEG_EOF); /* as jpeg_mem_src: a fatal warning for the job (sr_io.c) */
    src->pub.next_input_byte = fake_eoi;
    src->pub.bytes_in_buffer = 2;
    return TRUE;
  }
  /* A decoder in steps suspends here (libjpeg's suspending source: its decoders resume at the unit they
   * were in, from the bytes not yet consumed, which stay where they are). */
  const uint32_t limit = *src->limit;
  if (limit && src->pos >= limit) return FALSE;
  uint32_t n = src->len - src->pos;
  if (n > SR_SOURCE_BYTES) n = SR_SOURCE_BYTES;
  if (limit && n > limit - src->pos) n = limit - src->pos;
  src->pub.next_input_byte = src->data + src->pos;
  src->pub.bytes_in_buffer = n;
  src->pos += n;
  return TRUE;
}

/* Skips within the input itself, never through fill_input_buffer (which may suspend); a skip past the
 * end leaves the source at the end, where the next fill inserts the EOI. */
static void source_skip(j_decompress_ptr d, long count) {
  sr_source *src = (sr_source *)d->src;
  if (count <= 0) return;
  if ((size_t)count <= src->pub.bytes_in_buffer) {
    src->pub.next_input_byte += (size_t)count;
    src->pub.bytes_in_buffer -= (size_t)count;
    return;
  }
  const uint32_t beyond = (uint32_t)((size_t)count - src->pub.bytes_in_buffer);
  src->pos = beyond > src->len - src->pos ? src->len : src->pos + beyond;
  src->pub.next_input_byte = src->data + src->pos;
  src->pub.bytes_in_buffer = 0;
}

void sr_open_decoder(sr_job *job, j_decompress_ptr d) {
  sr_error_init(job, &d->err);
  jpeg_create_decompress(d);
  sr_source *src = (*d->mem->alloc_small)((j_common_ptr)d, JPOOL_PERMANENT, sizeof(sr_source));
  src->pub.init_source = source_init;
  src->pub.fill_input_buffer = source_fill;
  src->pub.skip_input_data = source_skip;
  src->pub.resync_to_restart = jpeg_resync_to_restart;
  src->pub.term_source = source_term;
  src->pub.next_input_byte = NULL;
  src->pub.bytes_in_buffer = 0;
  src->data = job->input;
  src->len = job->input_len;
  src->pos = 0;
  src->limit = &job->feed_limit;
  d->src = &src->pub;
}

/* The header's quantisation tables, for sr_align_tables: luma's, and per position the finer of Cb's and Cr's. */
static void keep_input_tables(sr_job *job, j_decompress_ptr d) {
  job->input_q_ok = 0;
  const int n = d->num_components;
  if (d->data_precision != 8 || !((n == 1 && d->jpeg_color_space == JCS_GRAYSCALE) || (n == 3 && d->jpeg_color_space == JCS_YCbCr))) return;
  for (int ci = 0; ci < n; ci++) {
    const int t = d->comp_info[ci].quant_tbl_no;
    if (t < 0 || t >= NUM_QUANT_TBLS || !d->quant_tbl_ptrs[t]) return;
  }
  const JQUANT_TBL *luma = d->quant_tbl_ptrs[d->comp_info[0].quant_tbl_no];
  for (int i = 0; i < DCTSIZE2; i++) {
    job->input_q[0][i] = luma->quantval[i];
    if (n == 3) {
      const UINT16 cb = d->quant_tbl_ptrs[d->comp_info[1].quant_tbl_no]->quantval[i];
      const UINT16 cr = d->quant_tbl_ptrs[d->comp_info[2].quant_tbl_no]->quantval[i];
      job->input_q[1][i] = cb < cr ? cb : cr;
    }
  }
  const uint8_t *at = d->src->next_input_byte;
  if (at < job->input || at > job->input + job->input_len) return;
  job->input_q_after = (uint32_t)(at - job->input);
  job->input_q_checked = 0;
  job->input_q_ok = 1;
}

/*
 * The fewest bits of entropy-coded data a block of a Huffman-coded file can take. Every Huffman code is
 * at least 1 bit long (a table of one symbol still spends a bit on it). A sequential (baseline) scan
 * codes for each block a DC difference category and then at least one AC symbol (EOB, or the
 * coefficients up to the 63rd): 2 codes, so 2 bits. A progressive file's first DC scan codes one DC
 * category per block of every component (1 bit) and may cover all its AC coefficients with a few
 * end-of-band runs (an EOBRUN symbol spans up to 32,767 blocks), so 1 bit is all it must hold. Arithmetic
 * coding can take far less than a bit per block (its probabilities adapt to a flat image), so it has no
 * such bound: those files are stopped by the per-row checks and, when progressive, by the memory budget.
 */
#define SR_MIN_BITS_PER_BLOCK_SEQUENTIAL 2
#define SR_MIN_BITS_PER_BLOCK_PROGRESSIVE 1

/* Refuses a Huffman-coded file whose remaining bytes cannot hold the blocks its frame declares, before
 * jpeg_start_decompress allocates anything the size of the image (a progressive file's coefficients:
 * 2 bytes a sample) and before any decoding. */
void sr_check_data_length(sr_job *job, j_decompress_ptr d) {
  if (d->arith_code) return;
  uint64_t blocks = 0;
  for (int ci = 0; ci < d->num_components; ci++) {
    const jpeg_component_info *c = &d->comp_info[ci];
    blocks += (uint64_t)c->width_in_blocks * c->height_in_blocks;
  }
  const uint64_t bits = blocks * (d->progressive_mode ? SR_MIN_BITS_PER_BLOCK_PROGRESSIVE : SR_MIN_BITS_PER_BLOCK_SEQUENTIAL);
  const sr_source *src = (const sr_source *)d->src;
  const uint64_t left = (uint64_t)(src->len - src->pos) + d->src->bytes_in_buffer;
  if (left * 8 < bits) sr_fail(job, "the JPEG's image data is too short for the size its header declares");
}

/* A single-scan arithmetic-coded file whose scan met a marker other than a restart (EOI, or the end of
 * the input, where the source inserts one) while iMCU rows of the frame are still to come: the data
 * ended before the frame did. Arithmetic-coded scans decode zeros past a marker without a warning, so
 * this is what stops them. Huffman-coded ones warn (JWRN_HIT_MARKER) as soon as a row needs bits the
 * data does not have, and only then: their bit buffer reads ahead, so a small flat image's whole scan
 * (a 64 x 48 grey one is 30 bytes) is read, end-of-image marker included, before its last rows are
 * decoded, and a marker seen early means nothing there. */
static int scan_ended_early(j_decompress_ptr d) {
  if (!d->arith_code || jpeg_has_multiple_scans(d)) return 0;
  const int m = d->unread_marker;
  if (m == 0 || (m >= JPEG_RST0 && m <= JPEG_RST0 + 7)) return 0;
  return d->input_iMCU_row < d->total_iMCU_rows;
}

/* Reads the header (and keeps the APP1/APP2 markers for the caller to read) without decoding pixels. */
EMSCRIPTEN_KEEPALIVE int sr_job_header(sr_job *job) {
  TRY(job);
  j_decompress_ptr d = &job->header;
  sr_open_decoder(job, d);
  job->header_open = 1;
  jpeg_save_markers(d, JPEG_APP0 + 1, 0xFFFF);
  jpeg_save_markers(d, JPEG_APP0 + 2, 0xFFFF);
  jpeg_read_header(d, TRUE);
  int32_t *info = job->info;
  info[SR_INFO_WIDTH] = (int32_t)d->image_width;
  info[SR_INFO_HEIGHT] = (int32_t)d->image_height;
  info[SR_INFO_COMPONENTS] = d->num_components;
  info[SR_INFO_COLOR_SPACE] = d->jpeg_color_space;
  info[SR_INFO_PROGRESSIVE] = d->progressive_mode;
  info[SR_INFO_PRECISION] = d->data_precision;
  info[SR_INFO_ARITHMETIC] = d->arith_code;
  int max_h = 1, max_v = 1;
  for (int c = 0; c < d->num_components && c < 4; c++) {
    info[SR_INFO_SAMP + c * 2] = d->comp_info[c].h_samp_factor;
    info[SR_INFO_SAMP + c * 2 + 1] = d->comp_info[c].v_samp_factor;
    if (d->comp_info[c].h_samp_factor > max_h) max_h = d->comp_info[c].h_samp_factor;
    if (d->comp_info[c].v_samp_factor > max_v) max_v = d->comp_info[c].v_samp_factor;
  }
  info[SR_INFO_MAX_H] = max_h;
  info[SR_INFO_MAX_V] = max_v;
  info[SR_INFO_ADOBE] = d->saw_Adobe_marker;
  info[SR_INFO_ADOBE_TRANSFORM] = d->Adobe_transform;
  keep_input_tables(job, d);
  int markers = 0;
  for (jpeg_saved_marker_ptr m = d->marker_list; m; m = m->next) markers++;
  info[SR_INFO_MARKERS] = markers;
  return 0;
}

/* The i-th saved APP1/APP2 marker of the header as (code, pointer, length); valid until the header is closed. */
EMSCRIPTEN_KEEPALIVE int sr_job_marker(sr_job *job, int index, int32_t *out) {
  if (!job->header_open) return -1;
  jpeg_saved_marker_ptr m = job->header.marker_list;
  for (int i = 0; m && i < index; i++) m = m->next;
  if (!m) return -1;
  out[0] = m->marker;
  out[1] = (int32_t)(uintptr_t)m->data;
  out[2] = (int32_t)m->data_length;
  return 0;
}

EMSCRIPTEN_KEEPALIVE void sr_job_close_header(sr_job *job) {
  if (job->header_open) jpeg_destroy_decompress(&job->header);
  job->header_open = 0;
}

/* Queues a marker (copied) to be written into every output after the frame header. */
EMSCRIPTEN_KEEPALIVE int sr_job_add_marker(sr_job *job, int code, const uint8_t *data, uint32_t len) {
  if (job->marker_count == SR_MAX_MARKERS || len > 65533) return -1;
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) return -1;
  memcpy(copy, data, len);
  job->markers[job->marker_count++] = (sr_marker){code, copy, len};
  return 0;
}

void sr_write_markers(sr_job *job, j_compress_ptr c) {
  for (int i = 0; i < job->marker_count; i++)
    jpeg_write_marker(c, job->markers[i].code, job->markers[i].data, job->markers[i].len);
}

/* Sets what the pixel pipeline makes: decode at scale_num/8, resample to out_w × out_h (as stored). */
EMSCRIPTEN_KEEPALIVE int sr_job_set_pixels(sr_job *job, int scale_num, int out_w, int out_h, int orientation) {
  if (scale_num < 1 || scale_num > 8 || out_w < 1 || out_h < 1 || orientation < 1 || orientation > 8) return -1;
  job->scale_num = scale_num;
  job->out_w = out_w;
  job->out_h = out_h;
  job->orientation = orientation;
  job->channels = job->info[SR_INFO_COLOR_SPACE] == JCS_GRAYSCALE ? 1 : 3;
  job->win = (sr_box){0, 0, 0, 0};
  sr_job_free_frame(job);
  return 0;
}

/* Where upright pixel (x, y) of a w × h stored frame in EXIF orientation o is stored. */
static inline void stored_of(int w, int h, int o, int x, int y, int *sx, int *sy) {
  switch (o) {
    case 2: *sx = w - 1 - x; *sy = y; break;
    case 3: *sx = w - 1 - x; *sy = h - 1 - y; break;
    case 4: *sx = x; *sy = h - 1 - y; break;
    case 5: *sx = y; *sy = x; break;
    case 6: *sx = y; *sy = h - 1 - x; break;
    case 7: *sx = w - 1 - y; *sy = h - 1 - x; break;
    case 8: *sx = w - 1 - y; *sy = x; break;
    default: *sx = x; *sy = y; break;
  }
}

/*
 * Keeps only a box of the upright output (after sr_job_set_pixels, which clears it): the row puller
 * (sr_job_pull) then hands out that box's rows alone, and its runs decode only what the box's
 * resampled pixels take: the rows above it are skipped (jpeg_skip_scanlines: entropy-decoded where the
 * scan is sequential, never inverse-transformed), the columns beside it are cropped away
 * (jpeg_crop_scanline), and the decode stops after the box's last input row. The box's pixels are the
 * whole output's, byte for byte (sr_run_open says why). For the puller only: the encoders take whole
 * outputs.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_set_window(sr_job *job, int x, int y, int w, int h) {
  const int o = job->orientation;
  const int up_w = o >= 5 ? job->out_h : job->out_w, up_h = o >= 5 ? job->out_w : job->out_h;
  if (job->out_w < 1 || x < 0 || y < 0 || w < 1 || h < 1 || x + w > up_w || y + h > up_h) return -1;
  int ax, ay, bx, by;
  stored_of(job->out_w, job->out_h, o, x, y, &ax, &ay);
  stored_of(job->out_w, job->out_h, o, x + w - 1, y + h - 1, &bx, &by);
  job->win.x = ax < bx ? ax : bx;
  job->win.y = ay < by ? ay : by;
  job->win.w = (ax < bx ? bx - ax : ax - bx) + 1;
  job->win.h = (ay < by ? by - ay : ay - by) + 1;
  sr_job_free_frame(job);
  return 0;
}

/* The run's output as stored: the window, or the whole resampled image. */
static sr_box run_box(const sr_job *job) {
  return job->win.w ? job->win : (sr_box){0, 0, job->out_w, job->out_h};
}

EMSCRIPTEN_KEEPALIVE int sr_job_channels(sr_job *job) { return job->channels; }

/* Stored CMYK to RGB. Adobe's writers store the inks inverted (255 = no ink); others store them as is. */
static void cmyk_to_rgb(const uint8_t *cmyk, uint8_t *rgb, int width, int inverted) {
  for (int x = 0; x < width; x++, cmyk += 4, rgb += 3) {
    int c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
    if (!inverted) {
      c = 255 - c;
      m = 255 - m;
      y = 255 - y;
      k = 255 - k;
    }
    rgb[0] = (uint8_t)((c * k + 127) / 255);
    rgb[1] = (uint8_t)((m * k + 127) / 255);
    rgb[2] = (uint8_t)((y * k + 127) / 255);
  }
}

/*
 * A decoding run in steps: run_open starts the decoder at the job's scale (and the resampler), run_next
 * hands out the next output row as stored (NULL once every row is out), run_close checks the end of
 * the data and frees the run. Runs under the caller's setjmp.
 */
void sr_run_open(sr_job *job) {
  if (job->source) {
    job->source->open(job);
    return;
  }
  j_decompress_ptr d = &job->dec;
  job->rows_decoded = 0;
  sr_open_decoder(job, d);
  job->dec_open = 1;
  jpeg_read_header(d, TRUE);
  d->scale_num = (unsigned)job->scale_num;
  d->scale_denom = 8;
  d->dct_method = JDCT_ISLOW;
  job->run_cmyk = d->jpeg_color_space == JCS_CMYK || d->jpeg_color_space == JCS_YCCK;
  d->out_color_space = job->channels == 1 ? JCS_GRAYSCALE : job->run_cmyk ? JCS_CMYK : JCS_RGB;
  sr_check_data_length(job, d);
  jpeg_start_decompress(d);
  /* A multi-scan file (progressive) has read every scan by now: a truncated one warned already, and
   * its output pass (the whole image's inverse DCT) is not worth starting. */
  if (job->err.fatal_warnings) longjmp(job->err.jump, 1);
  const int sw = (int)d->output_width, sh = (int)d->output_height, ch = job->channels;
  const int resample = sw != job->out_w || sh != job->out_h;
  const sr_box out = run_box(job);
  /* The decoded rows and columns the output box takes: the resampler's span of it, or itself. */
  sr_box in = out;
  if (resample) {
    int x0, x1, y0, y1;
    sr_resize_span(sw, job->out_w, out.x, out.x + out.w, &x0, &x1);
    sr_resize_span(sh, job->out_h, out.y, out.y + out.h, &y0, &y1);
    in = (sr_box){x0, y0, x1 - x0, y1 - y0};
  }
  JDIMENSION crop_x = 0;
  if (job->win.w) {
    /* libjpeg's crop treats its sides as the image's (fancy upsampling replicates the edge chroma
     * there instead of blending its neighbour's), and a skip may leave the context rows above the
     * first row it decodes unset: both touch only pixels next to the cut. So the cut is an iMCU
     * (SR_WINDOW_MARGIN_IMCUS) farther out on each side than the span: the pixels the resampler takes
     * are then the full decode's. Below the span nothing is cut: the decode just stops. */
    const int imcu_w = d->min_DCT_scaled_size * d->max_h_samp_factor * SR_WINDOW_MARGIN_IMCUS;
    const int imcu_h = d->min_DCT_scaled_size * d->max_v_samp_factor * SR_WINDOW_MARGIN_IMCUS;
    const int left = in.x - imcu_w > 0 ? in.x - imcu_w : 0;
    const int right = in.x + in.w + imcu_w < sw ? in.x + in.w + imcu_w : sw;
    crop_x = (JDIMENSION)left;
    JDIMENSION crop_w = (JDIMENSION)(right - left);
    jpeg_crop_scanline(d, &crop_x, &crop_w);
    const int top = in.y - imcu_h > 0 ? in.y - imcu_h : 0;
    if (top > 0) jpeg_skip_scanlines(d, (JDIMENSION)top);
  }
  job->run_in = in;
  job->run_x = in.x - (int)crop_x;
  job->run_end = in.y + in.h;
  const size_t decoded_bytes = (size_t)d->output_width * (size_t)d->output_components;
  const size_t scaled_bytes = (size_t)d->output_width * ch, out_bytes = (size_t)out.w * ch;
  job->rows = malloc(decoded_bytes + scaled_bytes + out_bytes);
  if (!job->rows) sr_fail(job, "out of memory for the decoder's rows");
  job->run_scaled = job->rows + decoded_bytes;
  job->run_out = job->run_scaled + scaled_bytes;
  if (resample) {
    job->resizer = sr_resizer_create_box(sw, sh, job->out_w, job->out_h, ch, 0, &out, &in);
    if (!job->resizer) sr_fail(job, "out of memory for the resampler");
  }
}

uint8_t *sr_run_next(sr_job *job) {
  if (job->source) return job->source->next(job);
  j_decompress_ptr d = &job->dec;
  for (;;) {
    if (job->resizer && sr_resizer_pull(job->resizer, job->run_out)) return job->run_out;
    if ((int)d->output_scanline >= job->run_end) return NULL;
    const int y = (int)d->output_scanline;
    JSAMPROW row = job->rows;
    if (jpeg_read_scanlines(d, &row, 1) != 1) sr_fail(job, "the JPEG decoder stopped early");
    job->rows_decoded++;
    /* Checked per row (a new iMCU row is decoded every few rows), not after the whole image: libjpeg
     * goes on past the end of the data with grey blocks, which for a small file declaring a huge frame
     * is seconds of decoding nothing. */
    if (job->err.fatal_warnings) longjmp(job->err.jump, 1);
    if (scan_ended_early(d)) sr_fail(job, "the JPEG's image data ends before its last row");
    uint8_t *pixels = job->rows;
    if (job->run_cmyk) {
      cmyk_to_rgb(job->rows, job->run_scaled, (int)d->output_width, d->saw_Adobe_marker);
      pixels = job->run_scaled;
    }
    if (y < job->run_in.y) continue; /* the margin above a window (sr_run_open) */
    pixels += (size_t)job->run_x * job->channels;
    if (!job->resizer) return pixels;
    sr_resizer_push(job->resizer, pixels);
  }
}

void sr_run_close(sr_job *job) {
  if (job->source) {
    job->source->close(job);
    return;
  }
  /* A window's run stops after its last row: the rest of the data is never read. */
  if (job->dec.output_scanline >= job->dec.output_height) jpeg_finish_decompress(&job->dec);
  if (job->err.fatal_warnings) longjmp(job->err.jump, 1);
  close_run(job);
}

/*
 * Decodes the input in rows at the job's scale, resamples, and calls sink with each output row in
 * stored orientation. Runs under the caller's setjmp.
 */
void sr_pipeline_run(sr_job *job, sr_row_sink sink, void *ctx) {
  sr_run_open(job);
  for (uint8_t *row; (row = sr_run_next(job));) sink(job, row, ctx);
  sr_run_close(job);
}

void sr_frame_fill(sr_job *job) {
  if (job->frame && !job->step_started) return;
  while (!sr_frame_fill_step(job, run_box(job).h + 1)) continue;
}

/*
 * The frame filled at most max_rows rows at a time, so that a caller can give way between steps; 1 once
 * it is whole (then at once on a job whose frame is there). A frame half filled is marked by
 * step_started: a failure frees it (sr_job_free_frame in the entry point's cleanup is the caller's).
 * Runs under the caller's setjmp.
 */
int sr_frame_fill_step(sr_job *job, int max_rows) {
  const sr_box box = run_box(job);
  const size_t bytes = (size_t)box.w * job->channels;
  job->step_work = 0;
  if (!job->step_started) {
    if (job->frame) return 1;
    job->frame = malloc(bytes * box.h);
    if (!job->frame) sr_fail(job, "out of memory for the image");
    job->step_started = 1;
    job->step_row = 0;
    sr_run_open(job);
  }
  for (int n = 0; n < max_rows; n++) {
    uint8_t *row = sr_run_next(job);
    if (!row) {
      if (job->step_row != box.h) sr_fail(job, "the resampler produced the wrong number of rows");
      sr_run_close(job);
      job->step_started = 0;
      return 1;
    }
    if (job->step_row >= box.h) sr_fail(job, "the resampler produced the wrong number of rows");
    memcpy(job->frame + (size_t)job->step_row * bytes, row, bytes);
    job->step_row++;
    job->step_work += (uint32_t)box.w;
  }
  return 0;
}

/* sr_frame_fill_step as an entry point: 1 more to do, 0 the frame is whole, -1 failed (frame freed). */
EMSCRIPTEN_KEEPALIVE int sr_job_fill_step(sr_job *job, int max_rows) {
  if (setjmp(job->err.jump)) {
    sr_job_cleanup(job);
    if (job->step_started) sr_job_free_frame(job);
    job->step_started = 0;
    return -1;
  }
  return sr_frame_fill_step(job, max_rows) ? 0 : 1;
}

EMSCRIPTEN_KEEPALIVE uint32_t sr_job_step_work(sr_job *job) { return job->step_work; }

/* Decodes the whole (resampled) image into the job's frame, as stored; sr_job_frame() points at it. */
EMSCRIPTEN_KEEPALIVE int sr_job_decode_frame(sr_job *job) {
  TRY(job);
  sr_frame_fill(job);
  return 0;
}

EMSCRIPTEN_KEEPALIVE uint8_t *sr_job_frame(sr_job *job) { return job->frame; }
EMSCRIPTEN_KEEPALIVE int sr_job_fatal_warnings(sr_job *job) { return job->err.fatal_warnings; }
/* Rows the last decoding run produced (at its DCT scale) before it finished or stopped; rows a window
 * skipped are not counted: they were never inverse-transformed. */
EMSCRIPTEN_KEEPALIVE int sr_job_rows_decoded(sr_job *job) { return job->rows_decoded; }

/* Row y of the upright image from a stored frame (w × h, ch bytes a pixel) in EXIF orientation o:
 * upright (x, y) comes from stored (sx, sy). */
void sr_upright_row(const uint8_t *frame, int w, int h, int ch, int o, int y, uint8_t *out) {
  const int width = o >= 5 ? h : w;
  for (int x = 0; x < width; x++) {
    int sx, sy;
    stored_of(w, h, o, x, y, &sx, &sy);
    const uint8_t *src = frame + ((size_t)sy * w + sx) * ch;
    uint8_t *dst = out + (size_t)x * ch;
    /* The common pixel sizes copied byte by byte: a memcpy of a run-time size is a call per pixel. */
    if (ch == 3) {
      dst[0] = src[0];
      dst[1] = src[1];
      dst[2] = src[2];
    } else if (ch == 1) {
      dst[0] = src[0];
    } else {
      memcpy(dst, src, (size_t)ch);
    }
  }
}

/*
 * Rows pulled by a caller outside the engine that awaits between batches (PNG output): the same run
 * as sr_pipeline_run, upright. Upright (orientation 1) rows stream from the decoder; any other
 * orientation needs every row first, so the job's frame is filled once and read turned.
 */
EMSCRIPTEN_KEEPALIVE int sr_job_pull_begin(sr_job *job) {
  TRY(job);
  close_run(job);
  job->pull_row = 0;
  if (job->orientation == 1) sr_run_open(job);
  else sr_frame_fill(job);
  return 0;
}

/* Writes up to `max` upright rows (upright width × channels bytes each) to out; the count, 0 at the end, -1 on failure. */
EMSCRIPTEN_KEEPALIVE int sr_job_pull(sr_job *job, uint8_t *out, int max) {
  TRY(job);
  const int o = job->orientation, ch = job->channels;
  const sr_box box = run_box(job);
  const int up_w = o >= 5 ? box.h : box.w, up_h = o >= 5 ? box.w : box.h;
  const size_t bytes = (size_t)up_w * ch;
  int n = 0;
  while (n < max && job->pull_row < up_h) {
    if (o == 1) {
      const uint8_t *row = sr_run_next(job);
      if (!row) sr_fail(job, "the resampler produced the wrong number of rows");
      memcpy(out + (size_t)n * bytes, row, bytes);
    } else {
      sr_upright_row(job->frame, box.w, box.h, ch, o, job->pull_row, out + (size_t)n * bytes);
    }
    n++;
    job->pull_row++;
  }
  if (job->pull_row == up_h && n < max) {
    if (o == 1) {
      if (sr_run_next(job)) sr_fail(job, "the resampler produced the wrong number of rows");
      if (job->dec_open) sr_run_close(job);
    } else {
      sr_job_free_frame(job);
    }
    job->pull_row++; /* finished: later calls return 0 */
  }
  return n;
}
