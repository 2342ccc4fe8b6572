/*
 * Adaptive quantisation as a zeroing rule. A JPEG has one table per component, so the only thing that
 * can change from block to block is which coefficients are kept. Each luma block gets a masking value
 * from its pixels: how busy it is, in a way that an edge next to a flat area does not count as busy.
 * The trellis (sr_trellis.c) then zeroes, before its search, every AC coefficient under a threshold that
 * rises with that value: in busy, noisy blocks small coefficients are noise nobody sees and cost bits;
 * in flat blocks and beside edges that border flat areas they are what the eye (and butteraugli's
 * max-norm) sees, so there the threshold stays at plain rounding's half step.
 *
 * The masking value of a luma block (the idea is jpegli's adaptive quantisation; this is our own):
 * - activity of a 4 × 4 cell: the mean of |4p − (left + right + up + down)| / 4 over its 16 samples,
 *   a local contrast that flat gradients do not raise;
 * - an erosion: each of the block's four cells takes a weighted mean of the four lowest activities in
 *   its 3 × 3 cell neighbourhood, so a cell next to a flat one counts as nearly flat (a sharp edge
 *   with sky beside it keeps its coefficients, where a ringing artefact would show);
 * - the block's value A is the mean of its four eroded cells, and its strength z = A / (A + knee):
 *   0 in a flat block, rising to 1 in a busy one.
 * The coefficient at zigzag distance d = u + v is zeroed when under 0.5 + z × strength × min(1, d / 3)
 * steps: the lowest frequencies, which carry a block's shape, are touched least. Chroma blocks take
 * the mean z of the luma blocks they cover, with chroma's own strength. A second use of z gates the
 * trellis's energy term (its λ rising with the block's AC energy), so that an edge beside a flat area,
 * which has energy but no masking, is not quantised as texture.
 *
 * Off by default (every knob 0, the output then byte-identical to the encoder without it): on camera
 * photos neither use won at equal SSIMULACRA2, butteraugli and SSIM against sharp's MozJPEG (figures
 * in docs/benchmarks.md, "Encoder changes tried on camera photos"); zeroing in busy blocks cost bytes
 * at equal SSIMULACRA2, which counts lost texture. Kept, with its knobs, so the benches can measure it
 * again without a rebuild.
 *
 * Bounds: it reads only the rows of the iMCU row that libjpeg's compressor already holds (8 or 16 luma
 * rows; samples outside them are the nearest inside), so it streams as the encoder does, and keeps one
 * float per luma block of the current iMCU row for chroma (SR_AQ_MAX_V × SR_AQ_MAX_BLOCKS, static).
 */
#define JPEG_INTERNALS /* jpeglib.h then brings jpegint.h */
#include <emscripten.h>
#include <stdlib.h>

#include "sr_jpeg.h"

/* Luma blocks across the widest JPEG (65,535 samples), and the most luma block rows of an iMCU row. */
#define SR_AQ_MAX_BLOCKS ((65535 + DCTSIZE - 1) / DCTSIZE)
#define SR_AQ_MAX_V MAX_SAMP_FACTOR
static float luma_z[SR_AQ_MAX_V][SR_AQ_MAX_BLOCKS];

/* Strengths (thresholds' rise at full masking, in thousandths of a step) and the knee (hundredths of
 * the activity unit above): set for the tuning benches by sr_set_aq; 0 strength turns it off. */
static int aq_luma_milli = 0;
static int aq_chroma_milli = 0;
static int aq_knee_centi = 400;
/* The trellis's energy term (λ rising with the block's AC energy) applies in full from this z up
 * (thousandths), and in proportion below it: an edge beside a flat area has energy but little masking. */
static int aq_gate_milli = 0;

EMSCRIPTEN_KEEPALIVE void sr_set_aq(int luma_milli, int knee_centi, int chroma_milli, int gate_milli) {
  aq_luma_milli = luma_milli < 0 ? 0 : luma_milli > 4000 ? 4000 : luma_milli;
  aq_chroma_milli = chroma_milli < 0 ? 0 : chroma_milli > 4000 ? 4000 : chroma_milli;
  aq_knee_centi = knee_centi < 1 ? 1 : knee_centi;
  aq_gate_milli = gate_milli < 0 ? 0 : gate_milli > 1000 ? 1000 : gate_milli;
}

/* The zeroing threshold's rise at full weight, in steps, for a block of masking z (< 0: none). */
float sr_aq_rise(float z, int chroma) {
  return z < 0.0f ? 0.0f : z * (float)(chroma ? aq_chroma_milli : aq_luma_milli) * 0.001f;
}

/* What share of the trellis's energy term a block of masking z gets. */
float sr_aq_gate(float z) {
  if (z < 0.0f || !aq_gate_milli) return 1.0f;
  const float g = z / ((float)aq_gate_milli * 0.001f);
  return g > 1.0f ? 1.0f : g;
}

/* Activity of the 4 × 4 cell at (x0, y0) of rows × width samples. */
static float cell_activity(JSAMPARRAY rows, int nrows, int width, int x0, int y0) {
  int sum = 0;
  for (int y = y0; y < y0 + 4; y++) {
    const JSAMPLE *row = rows[y], *up = rows[y > 0 ? y - 1 : 0], *down = rows[y + 1 < nrows ? y + 1 : nrows - 1];
    for (int x = x0; x < x0 + 4; x++) {
      const int l = row[x > 0 ? x - 1 : 0], r = row[x + 1 < width ? x + 1 : width - 1];
      sum += abs(4 * row[x] - l - r - up[x] - down[x]);
    }
  }
  return (float)sum / 64.0f;
}

/* The weighted mean of the four lowest of n ≥ 4 values. */
static float low_four(float *v, int n) {
  static const float weight[4] = {0.4f, 0.25f, 0.2f, 0.15f};
  float out = 0.0f;
  for (int i = 0; i < 4; i++) {
    int lo = i;
    for (int j = i + 1; j < n; j++)
      if (v[j] < v[lo]) lo = j;
    const float t = v[i];
    v[i] = v[lo];
    v[lo] = t;
    out += weight[i] * v[i];
  }
  return out;
}

/* z of the luma block whose top-left sample is (bx, by) in the iMCU row's rows. */
static float luma_block_z(JSAMPARRAY rows, int nrows, int width, int bx, int by) {
  float act[4][4]; /* cells (bx/4 − 1 … bx/4 + 2) × (by/4 − 1 … by/4 + 2); NAN outside the rows */
  const int cx0 = bx / 4 - 1, cy0 = by / 4 - 1, cells_x = width / 4, cells_y = nrows / 4;
  for (int j = 0; j < 4; j++)
    for (int i = 0; i < 4; i++) {
      const int cx = cx0 + i, cy = cy0 + j;
      act[j][i] = cx < 0 || cy < 0 || cx >= cells_x || cy >= cells_y ? -1.0f : cell_activity(rows, nrows, width, cx * 4, cy * 4);
    }
  float sum = 0.0f;
  for (int j = 1; j <= 2; j++)
    for (int i = 1; i <= 2; i++) {
      float v[9];
      int n = 0;
      for (int dj = -1; dj <= 1; dj++)
        for (int di = -1; di <= 1; di++)
          if (act[j + dj][i + di] >= 0.0f) v[n++] = act[j + dj][i + di];
      sum += low_four(v, n);
    }
  const float a = sum * 0.25f;
  return a / (a + (float)aq_knee_centi * 0.01f);
}

/*
 * The masking z of the block at (start_row, start_col) of the component's iMCU row (rows: its first
 * row), −1 when off. Luma blocks come before the chroma blocks
 * that cover them in both of libjpeg's coefficient controllers, so chroma reads this row's luma z.
 */
float sr_aq_block(j_compress_ptr c, jpeg_component_info *comp, JSAMPARRAY rows, JDIMENSION start_row,
                  JDIMENSION start_col) {
  if (!aq_luma_milli && !aq_chroma_milli && !aq_gate_milli) return -1.0f;
  if (c->jpeg_color_space != JCS_YCbCr && c->jpeg_color_space != JCS_GRAYSCALE) return -1.0f;
  const jpeg_component_info *luma = &c->comp_info[0];
  const int bx = (int)start_col / DCTSIZE, by = (int)start_row / DCTSIZE;
  if (comp->component_index == 0) {
    const float z = luma_block_z(rows, comp->v_samp_factor * DCTSIZE, (int)comp->width_in_blocks * DCTSIZE,
                                 (int)start_col, (int)start_row);
    if (by < SR_AQ_MAX_V && bx < SR_AQ_MAX_BLOCKS) luma_z[by][bx] = z;
    return z;
  }
  const int fx = luma->h_samp_factor > comp->h_samp_factor ? luma->h_samp_factor / comp->h_samp_factor : 1;
  const int fy = luma->v_samp_factor > comp->v_samp_factor ? luma->v_samp_factor / comp->v_samp_factor : 1;
  float sum = 0.0f;
  int n = 0;
  for (int y = by * fy; y < (by + 1) * fy && y < SR_AQ_MAX_V; y++)
    for (int x = bx * fx; x < (bx + 1) * fx && x < (int)luma->width_in_blocks; x++) sum += luma_z[y][x], n++;
  return n ? sum / (float)n : -1.0f;
}
