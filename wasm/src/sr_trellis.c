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
 *   squared AC coefficient in DCT units, plus a part the flattest blocks go without (flat × energy /
 *   flat knee, all of it from the flat knee up); each is settable (sr_set_trellis, sr_set_trellis_flat)
 *   for the tuning bench.
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
/* λ base in thousandths of a step² per bit, and the energy knee (DCT units²): each quality's, from the
 * anchors of sr_quality.c (sr_trellis_lambda), unless the tuning benches pinned them (sr_set_trellis).
 * 0 base turns trellis off. */
static int trellis_base_milli = 60;
static int trellis_knee = 600;
static int trellis_pinned;
/* Chroma's λ base, 0: luma's. */
static int trellis_chroma_milli = 0;
static unsigned char ac_bits[2][256]; /* code length of each AC symbol, luma and chroma tables */

/*
 * The rate model and the distortion's weighting, each a knob for the camera bench (sr_set_trellis_model):
 * - adapt: 0 prices every symbol at its standard code length for the whole job; 1 re-derives each
 *   table's lengths at every iMCU row from the symbols the trellis chose so far in this pass
 *   (−log2 p, p from the counts plus `prior` pseudo-symbols spread as the standard lengths say),
 *   because the file is written with tables optimised for the image, not the standard ones.
 * - eob_milli: the EOB's price in thousandths of its code length (progressive scans code runs of
 *   EOBs across blocks, far cheaper than one code per block).
 * - tilt_milli: the distortion at zigzag distance d = u + v weighted by (1 + t d), or 1 / (1 + t d)
 *   when negative, t = |tilt| / 1000: keeps more (or fewer) high frequencies than the table alone says.
 * - wide: 1 adds to each coefficient's candidates the largest value of every smaller size category
 *   (2^s − 1), which saves a size bit per category at more distortion.
 */
static int model_adapt = 0;
static int model_prior = 4096;
static int model_eob_milli = 1000;
static int model_tilt_milli = 0;
static int model_wide = 0;
static float ac_rate[2][256]; /* the price of each AC symbol in bits, as the search reads it */
static float weight[DCTSIZE2]; /* distortion weight per zigzag position */
static float counts[2][256];
static float counted[2];
static int model_row = -1; /* the iMCU row the rates were last derived for; −1: a pass not yet begun */
static j_compress_ptr model_c;  /* the job's compress object while its trellis is on: its next scanline */

/* The λ the flattest blocks go without: it is added back as the energy rises from 0 to flat_energy
 * (thousandths of a step² per bit; 0: none), each quality's from sr_quality.c unless pinned
 * (sr_set_trellis_flat). */
static int flat_bump_milli = 0;
static int flat_energy = 1;
static int flat_pinned;
EMSCRIPTEN_KEEPALIVE void sr_set_trellis_flat(int bump_milli, int energy) {
  flat_bump_milli = bump_milli < 0 ? 0 : bump_milli;
  flat_energy = energy < 1 ? 1 : energy;
  flat_pinned = 1;
}

/* chroma_milli: chroma's own λ base (0 or left out by the caller: luma's). */
EMSCRIPTEN_KEEPALIVE void sr_set_trellis(int base_milli, int knee, int chroma_milli) {
  trellis_base_milli = base_milli < 0 ? 0 : base_milli;
  trellis_knee = knee < 1 ? 1 : knee;
  trellis_chroma_milli = chroma_milli < 0 ? 0 : chroma_milli;
  trellis_pinned = 1;
  /* A pinned λ is the whole λ: the flat blocks' part only where sr_set_trellis_flat pins it too. */
  if (!flat_pinned) flat_bump_milli = 0, flat_pinned = 1;
}

void sr_trellis_lambda(int base_milli, int knee, int chroma_milli, int flat_milli, int flat_knee) {
  if (!flat_pinned) flat_bump_milli = flat_milli, flat_energy = flat_knee < 1 ? 1 : flat_knee;
  if (trellis_pinned) return;
  trellis_base_milli = base_milli;
  trellis_knee = knee;
  trellis_chroma_milli = chroma_milli;
}

/* Sets the rate model's knobs (see above); out-of-range values are clamped. */
EMSCRIPTEN_KEEPALIVE void sr_set_trellis_model(int adapt, int prior, int eob_milli, int tilt_milli, int wide) {
  model_adapt = adapt ? 1 : 0;
  model_prior = prior < 1 ? 1 : prior;
  model_eob_milli = eob_milli < 0 ? 0 : eob_milli;
  model_tilt_milli = tilt_milli;
  model_wide = wide ? 1 : 0;
}

static void code_lengths(const JHUFF_TBL *table, unsigned char *out) {
  memset(out, 24, 256); /* a symbol the table lacks: dear, so the search avoids it */
  if (!table) return;
  int k = 0;
  for (int len = 1; len <= 16; len++)
    for (int i = 0; i < table->bits[len]; i++) out[table->huffval[k++]] = (unsigned char)len;
}

/* Called after jpeg_set_defaults (the standard tables are in place) and before the first pass. */
/* The standard lengths as rates, the EOB priced as set; and no symbol counted yet. */
static void reset_rates(void) {
  for (int t = 0; t < 2; t++) {
    for (int s = 0; s < 256; s++) ac_rate[t][s] = (float)ac_bits[t][s], counts[t][s] = 0.0f;
    ac_rate[t][0x00] *= (float)model_eob_milli / 1000.0f;
    counted[t] = 0.0f;
  }
}

/* Each table's rates from the symbols counted so far, the standard lengths as a prior. */
static void derive_rates(void) {
  for (int t = 0; t < 2; t++) {
    float prior[256], prior_sum = 0.0f;
    for (int s = 0; s < 256; s++) prior_sum += prior[s] = ldexpf(1.0f, -(int)ac_bits[t][s]);
    const float scale = (float)model_prior / prior_sum, total = counted[t] + (float)model_prior;
    for (int s = 0; s < 256; s++) {
      float bits = -log2f((counts[t][s] + scale * prior[s]) / total);
      /* A Huffman code spends at least one bit and at most 16 on a symbol. */
      ac_rate[t][s] = bits < 1.0f ? 1.0f : bits > 16.0f ? 16.0f : bits;
    }
    ac_rate[t][0x00] *= (float)model_eob_milli / 1000.0f;
  }
}

/*
 * Called once per block: a new pass (the iMCU row went back) starts from the standard rates, and each
 * new iMCU row re-derives them from what the rows before it chose, so both passes of a two-pass encode
 * see the same rates at the same block. An encoder given several iMCU rows in one call of
 * jpeg_write_scanlines keeps the rates it had: the same in every pass.
 */
static void follow_rows(void) {
  if (!model_adapt || !model_c) return;
  const int row = (int)(model_c->next_scanline / (JDIMENSION)(model_c->max_v_samp_factor * DCTSIZE));
  if (row < model_row || model_row < 0) {
    reset_rates();
    model_row = row;
  } else if (row > model_row) {
    derive_rates();
    model_row = row;
  }
}

/* Called after jpeg_set_defaults (the standard tables are in place) and before the first pass. */
void sr_trellis_prepare(j_compress_ptr c) {
  sr_trellis_on = trellis_base_milli > 0;
  code_lengths(c->ac_huff_tbl_ptrs[0], ac_bits[0]);
  code_lengths(c->ac_huff_tbl_ptrs[1] ? c->ac_huff_tbl_ptrs[1] : c->ac_huff_tbl_ptrs[0], ac_bits[1]);
  reset_rates();
  model_row = -1;
  model_c = c;
  const float t = (float)(model_tilt_milli < 0 ? -model_tilt_milli : model_tilt_milli) * 0.001f;
  for (int k = 0; k < DCTSIZE2; k++) {
    const int n = jpeg_natural_order[k];
    const float w = 1.0f + t * (float)(n / DCTSIZE + n % DCTSIZE);
    weight[k] = model_tilt_milli < 0 ? 1.0f / w : w;
  }
}

void sr_trellis_off(void) {
  sr_trellis_on = 0;
  model_c = NULL;
}

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
  follow_rows();
  const int table = chroma ? 1 : 0;
  const float *bits = ac_rate[table];
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
    zero_cost[k] = zero_cost[k - 1] + weight[k] * a[k] * a[k];
  }
  /* Mean squared AC coefficient in DCT units (the workspace is 8 × those, so 64 × squared). */
  energy /= 63.0f * 64.0f;
  const int base_milli = chroma && trellis_chroma_milli ? trellis_chroma_milli : trellis_base_milli;
  float lambda = (float)base_milli * 0.001f * (1.0f + sr_aq_gate(aq) * energy / (float)trellis_knee);
  if (flat_bump_milli)
    lambda += (float)flat_bump_milli * 0.001f * (energy >= (float)flat_energy ? 1.0f : energy / (float)flat_energy);

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
    /* m, m − 1 and, with `wide`, the largest value of each smaller size (a size bit saved per step). */
    for (int v = m; v >= 1; v = v == m ? m - 1 : model_wide ? (1 << (magnitude_bits(v) - 1)) - 1 : 0) {
      const int size = magnitude_bits(v);
      const float d = weight[k] * (a[k] - (float)v) * (a[k] - (float)v);
      for (int j = 0; j < nodes; j++) {
        const int run = k - pos[j] - 1;
        const float rate = bits[((run & 15) << 4) | size] + (float)size + (float)(run >> 4) * bits[0xF0];
        const float cost = best[j] + (zero_cost[k - 1] - zero_cost[pos[j]]) + d + lambda * rate;
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
                       (pos[e] < DCTSIZE2 - 1 ? lambda * bits[0x00] : 0.0f);
    if (cost < end_best) end_best = cost, end = e;
  }

  for (int k = 1; k < DCTSIZE2; k++) coef[jpeg_natural_order[k]] = 0;
  if (model_adapt && pos[end] < DCTSIZE2 - 1) counts[table][0x00] += 1.0f;
  for (int e = end; e > 0; e = from[e]) {
    const int n = jpeg_natural_order[pos[e]];
    coef[n] = (JCOEF)(workspace[n] < 0 ? -value[e] : value[e]);
    if (model_adapt) {
      const int run = pos[e] - pos[from[e]] - 1;
      counts[table][((run & 15) << 4) | magnitude_bits(value[e])] += 1.0f;
      counts[table][0xF0] += (float)(run >> 4);
      counted[table] += 1.0f + (float)(run >> 4);
    }
  }
  if (model_adapt && pos[end] < DCTSIZE2 - 1) counted[table] += 1.0f;
}
