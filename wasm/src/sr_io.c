/* The job's error manager and output destinations. */
#include <stdlib.h>
#include <string.h>

#include "sr_jpeg.h"
#include "jerror.h"

static void on_error(j_common_ptr cinfo) {
  sr_error *err = (sr_error *)cinfo->err;
  (*cinfo->err->format_message)(cinfo, err->message);
  longjmp(err->jump, 1);
}

/* libjpeg reports damaged data as warnings and goes on with grey blocks. Those that mean the pixels
 * are wrong make the job fail; harmless ones (extraneous bytes between markers) are only counted. */
static void on_message(j_common_ptr cinfo, int level) {
  sr_error *err = (sr_error *)cinfo->err;
  if (level >= 0) return;
  err->warnings++;
  switch (err->pub.msg_code) {
    case JWRN_JPEG_EOF:
    case JWRN_HIT_MARKER:
    case JWRN_HUFF_BAD_CODE:
    case JWRN_MUST_RESYNC:
    case JWRN_NOT_SEQUENTIAL:
    case JWRN_BOGUS_PROGRESSION:
      if (err->fatal_warnings++ == 0) (*cinfo->err->format_message)(cinfo, err->message);
      break;
    default:
      break;
  }
}

static void quiet(j_common_ptr cinfo) { (void)cinfo; }

void sr_error_init(sr_job *job, struct jpeg_error_mgr **slot) {
  *slot = jpeg_std_error(&job->err.pub);
  job->err.pub.error_exit = on_error;
  job->err.pub.emit_message = on_message;
  job->err.pub.output_message = quiet;
}

/* ---- Chunk destination: each full chunk is kept as it is and a new one started. */

typedef struct {
  struct jpeg_destination_mgr pub;
  sr_job *job;
  uint8_t *current;
} chunk_dest;

static void push_chunk(j_compress_ptr cinfo, chunk_dest *dest, uint32_t len) {
  if (sr_chunk_list_push(&dest->job->output, dest->current, len)) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 10);
  dest->current = NULL;
}

static void next_chunk(j_compress_ptr cinfo, chunk_dest *dest) {
  dest->current = malloc(SR_CHUNK_BYTES);
  if (!dest->current) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 11);
  dest->pub.next_output_byte = dest->current;
  dest->pub.free_in_buffer = SR_CHUNK_BYTES;
}

static void chunk_init(j_compress_ptr cinfo) { next_chunk(cinfo, (chunk_dest *)cinfo->dest); }

static boolean chunk_empty(j_compress_ptr cinfo) {
  chunk_dest *dest = (chunk_dest *)cinfo->dest;
  push_chunk(cinfo, dest, SR_CHUNK_BYTES);
  next_chunk(cinfo, dest);
  return TRUE;
}

static void chunk_term(j_compress_ptr cinfo) {
  chunk_dest *dest = (chunk_dest *)cinfo->dest;
  uint32_t used = SR_CHUNK_BYTES - (uint32_t)dest->pub.free_in_buffer;
  if (used > 0) push_chunk(cinfo, dest, used);
  free(dest->current);
  dest->current = NULL;
}

void sr_dest_chunks(j_compress_ptr cinfo, sr_job *job) {
  chunk_dest *dest = (*cinfo->mem->alloc_small)((j_common_ptr)cinfo, JPOOL_IMAGE, sizeof(chunk_dest));
  memset(dest, 0, sizeof(*dest));
  dest->job = job;
  dest->pub.init_destination = chunk_init;
  dest->pub.empty_output_buffer = chunk_empty;
  dest->pub.term_destination = chunk_term;
  cinfo->dest = &dest->pub;
}

void sr_chunks_clear(sr_job *job) { sr_chunk_list_free(&job->output); }

/* ---- Chunk lists, of the JPEG job and of the WebP engine. */

int sr_chunk_list_push(sr_chunk_list *list, uint8_t *data, uint32_t len) {
  if (list->count == list->cap) {
    int cap = list->cap ? list->cap * 2 : 64;
    sr_chunk *grown = realloc(list->chunks, (size_t)cap * sizeof(sr_chunk));
    if (!grown) return -1;
    list->chunks = grown;
    list->cap = cap;
  }
  list->chunks[list->count].data = data;
  list->chunks[list->count].len = len;
  list->count++;
  list->len += len;
  return 0;
}

void sr_chunk_list_free(sr_chunk_list *list) {
  for (int i = 0; i < list->count; i++) free(list->chunks[i].data);
  free(list->chunks);
  list->chunks = NULL;
  list->count = list->cap = 0;
  list->len = 0;
}

int sr_chunk_list_get(const sr_chunk_list *list, int index, int32_t *out) {
  if (index < 0 || index >= list->count) return -1;
  out[0] = (int32_t)(uintptr_t)list->chunks[index].data;
  out[1] = (int32_t)list->chunks[index].len;
  return 0;
}

/* ---- Null destination: a statistics pass writes nothing anywhere. */

#define NULL_DEST_BYTES 4096

typedef struct {
  struct jpeg_destination_mgr pub;
  JOCTET buffer[NULL_DEST_BYTES];
} null_dest;

static void null_reset(j_compress_ptr cinfo) {
  null_dest *dest = (null_dest *)cinfo->dest;
  dest->pub.next_output_byte = dest->buffer;
  dest->pub.free_in_buffer = NULL_DEST_BYTES;
}

static boolean null_empty(j_compress_ptr cinfo) {
  null_reset(cinfo);
  return TRUE;
}

static void null_term(j_compress_ptr cinfo) { (void)cinfo; }

void sr_dest_null(j_compress_ptr cinfo) {
  null_dest *dest = (*cinfo->mem->alloc_small)((j_common_ptr)cinfo, JPOOL_IMAGE, sizeof(null_dest));
  dest->pub.init_destination = null_reset;
  dest->pub.empty_output_buffer = null_empty;
  dest->pub.term_destination = null_term;
  cinfo->dest = &dest->pub;
}
