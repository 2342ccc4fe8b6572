/*
 * Trellis quantisation of each block's AC coefficients: instead of rounding every coefficient on its
 * own, choose the quantised values that minimise distortion + λ × bits for the block as a whole, where
 * the bits are what the Huffman coder will spend on the (zero run, size) symbols, the ZRLs and the EOB.
 * It is what makes MozJPEG smaller than libjpeg at the same quality; libjpeg-turbo, which we build,
 * has none, so this is ours, called from forward_DCT (patches/02-jcdctmgr-trellis.patch).
 *
 * - Distortion is measured in quantisation steps, (|c| / step − v)², so the quantisation table's
 *   perceptual weighting carries over: a step of error costs the same at every frequency.
 * - λ (step² per bit) grows with the block's AC energy: textured blocks hide more error than flat ones,
 *   and SSIM, like the eye, forgives it there. λ = base × (1 + energy / knee), energy being the mean
 *   squared AC coefficient in DCT units; both are settable (sr_set_trellis) for the tuning bench.
 * - Rates come from the standard (Annex K) AC code lengths, read from the compress object before the
 *   first pass and fixed for the job, so that a two-pass encode quantises identically in both passes
 *   (the tables built from the first pass must cover every symbol the second one writes).
 * - Candidates for a coefficient that rounds to m ≥ 1 are m and m − 1 (and 0, by running past it);
 *   the search keeps, for each candidate position, the cheapest way to end a run of zeros there.
 */
#define JPEG_INTERNALS /* jpeglib.h then brings jpegint.h: jpeg_natural_order */
#include <emscripten.h>
#include <math.h>
#include <string.h>

#include "sr_jpeg.h"
#include "jdct.h" /* DCTELEM, the forward DCT's output type */

int sr_trellis_on;
/* λ base in thousandths of a step² per bit, and the energy knee (DCT units²); tuned with
 * `npm run bench -- jpeg-tuning`. 0 base turns trellis off. */
static int trellis_base_milli = 60;
static int trellis_knee = 600;
/* Chroma's λ base, 0: luma's. */
static int trellis_chroma_milli = 0;
static unsigned char ac_bits[2][256]; /* code length of each AC symbol, luma and chroma tables */

/* chroma_milli: chroma's own λ base (0 or left out by the caller: luma's). */
EMSCRIPTEN_KEEPALIVE void sr_set_trellis(int base_milli, int knee, int chroma_milli) {
  trellis_base_milli = base_milli < 0 ? 0 : base_milli;
  trellis_knee = knee < 1 ? 1 : knee;
  trellis_chroma_milli = chroma_milli < 0 ? 0 : chroma_milli;
}

static void code_lengths(const JHUFF_TBL *table, unsigned char *out) {
  memset(out, 24, 256); /* a symbol the table lacks: dear, so the search avoids it */
  if (!table) return;
  int k = 0;
  for (int len = 1; len <= 16; len++)
    for (int i = 0; i < table->bits[len]; i++) out[table->huffval[k++]] = (unsigned char)len;
}

/* Called after jpeg_set_defaults (the standard tables are in place) and before the first pass. */
void sr_trellis_prepare(j_compress_ptr c) {
  sr_trellis_on = trellis_base_milli > 0;
  code_lengths(c->ac_huff_tbl_ptrs[0], ac_bits[0]);
  code_lengths(c->ac_huff_tbl_ptrs[1] ? c->ac_huff_tbl_ptrs[1] : c->ac_huff_tbl_ptrs[0], ac_bits[1]);
}

void sr_trellis_off(void) { sr_trellis_on = 0; }

static int magnitude_bits(int v) {
  int n = 0;
  while (v) n++, v >>= 1;
  return n;
}

/*
 * coef: the block, its DC already quantised by forward_DCT (kept), its AC written here; workspace: the
 * forward DCT's output, 8 × the true coefficients, natural order; quantval: the table, natural order;
 * aq: the block's masking value from sr_aq_block (< 0: none), for adaptive quantisation's zeroing rule
 * and its gate on the energy term (sr_aq.c; both off by default).
 */
void sr_trellis_block(JCOEFPTR coef, const DCTELEM *workspace, const UINT16 *quantval, int chroma, float aq) {
  const unsigned char *bits = ac_bits[chroma ? 1 : 0];
  float a[DCTSIZE2];          /* |coefficient| in steps, zigzag order */
  float zero_cost[DCTSIZE2];  /* distortion of zeroing positions 1..k, cumulative */
  int rounded[DCTSIZE2];
  float energy = 0.0f;
  zero_cost[0] = 0.0f;
  const float rise = sr_aq_rise(aq, chroma);
  for (int k = 1; k < DCTSIZE2; k++) {
    const int n = jpeg_natural_order[k];
    const float c = (float)workspace[n];
    energy += c * c;
    a[k] = fabsf(c) / (float)(quantval[n] * 8);
    rounded[k] = (int)(a[k] + 0.5f);
    /* Adaptive quantisation's zeroing rule (sr_aq.c): under the block's threshold, not a candidate. */
    if (rise > 0.0f) {
      const int d = n / DCTSIZE + n % DCTSIZE;
      if (a[k] < 0.5f + rise * (d >= 3 ? 1.0f : (float)d / 3.0f)) rounded[k] = 0;
    }
    zero_cost[k] = zero_cost[k - 1] + a[k] * a[k];
  }
  /* Mean squared AC coefficient in DCT units (the workspace is 8 × those, so 64 × squared). */
  energy /= 63.0f * 64.0f;
  const int base_milli = chroma && trellis_chroma_milli ? trellis_chroma_milli : trellis_base_milli;
  const float lambda = (float)base_milli * 0.001f * (1.0f + sr_aq_gate(aq) * energy / (float)trellis_knee);

  /* Nodes: the start (position 0) and each position that can hold a non-zero value. */
  int pos[DCTSIZE2], value[DCTSIZE2], from[DCTSIZE2];
  float best[DCTSIZE2];
  int nodes = 1;
  pos[0] = 0;
  best[0] = 0.0f;
  for (int k = 1; k < DCTSIZE2; k++) {
    const int m = rounded[k];
    if (m < 1) continue;
    float node_best = INFINITY;
    int node_value = m, node_from = 0;
    for (int v = m; v >= m - 1 && v >= 1; v--) {
      const int size = magnitude_bits(v);
      const float d = (a[k] - (float)v) * (a[k] - (float)v);
      for (int j = 0; j < nodes; j++) {
        const int run = k - pos[j] - 1;
        const int rate = bits[((run & 15) << 4) | size] + size + (run >> 4) * bits[0xF0];
        const float cost = best[j] + (zero_cost[k - 1] - zero_cost[pos[j]]) + d + lambda * (float)rate;
        if (cost < node_best) node_best = cost, node_value = v, node_from = j;
      }
    }
    pos[nodes] = k;
    value[nodes] = node_value;
    from[nodes] = node_from;
    best[nodes] = node_best;
    nodes++;
  }

  /* Where the block ends: after node e, the rest zero and an EOB (none after position 63). */
  int end = 0;
  float end_best = INFINITY;
  for (int e = 0; e < nodes; e++) {
    const float cost = best[e] + (zero_cost[DCTSIZE2 - 1] - zero_cost[pos[e]]) +
                       (pos[e] < DCTSIZE2 - 1 ? lambda * (float)bits[0x00] : 0.0f);
    if (cost < end_best) end_best = cost, end = e;
  }

  for (int k = 1; k < DCTSIZE2; k++) coef[jpeg_natural_order[k]] = 0;
  for (int e = end; e > 0; e = from[e]) {
    const int n = jpeg_natural_order[pos[e]];
    coef[n] = (JCOEF)(workspace[n] < 0 ? -value[e] : value[e]);
  }
}
