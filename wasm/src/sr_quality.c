/*
 * What the engine's encoder does with a quality: the quantisation tables, how they are scaled and
 * rounded, and the progressive scan script. Each choice was measured on its own with
 * `npm run bench -- jpeg-tuning` (bytes at equal SSIM against sharp's MozJPEG; README, "Benchmarks"),
 * and each stays settable from there, so the rows of that table can be measured again:
 * - tables that rise gently with frequency, q(u, v) = b × (1 + s × (u + v)) at quality 50: luma
 *   b = 19, s = 0.05, chroma b = 9.5, s = 0.10, instead of Annex K's steep ones. SSIM rewards keeping
 *   the mid and high frequencies (texture, grain) that Annex K quantises hard, and RGB SSIM sees chroma
 *   errors in R and B at full weight, so chroma is half luma's step: with the trellis on, each of these
 *   cost fewer bytes at equal SSIM, interpolated between quality steps, than the shape before (luma 16,
 *   chroma 11, both s = 0.10) on the corpus and the grainy phone photos alike. The bases set the scale:
 *   our quality 80 lands near sharp's MozJPEG quality 80 in SSIM, as before;
 * - scaled as libjpeg scales (jpeg_quality_scaling), but each entry rounded with its own offset (a
 *   golden-ratio sequence over the positions) rather than all at .5: with one rounding, the entries of
 *   a diagonal all change at the same quality, so neighbouring qualities were often byte-identical and
 *   the next one 10 % larger; staggered, each quality moves a few entries and sizes step more evenly;
 * - trellis quantisation (sr_trellis.c), which replaced the earlier dead zone (patches/01, kept at 0
 *   for the tuning bench's older rows);
 * - a scan script of our own for colour images: DC, then each component's lowest two AC coefficients
 *   and the rest in separate scans, luma's rest first at half precision and refined last. Separate
 *   bands get their own optimised Huffman tables; it beat libjpeg's jpeg_simple_progression by 5 %.
 */
#include <emscripten.h>

#include "sr_jpeg.h"

int sr_deadzone_permille[2] = {0, 0};
static int dither = 1;
static int own_scans = 1;
static int annex_k; /* set by sr_set_quant_tables(NULL, NULL): libjpeg's own tables */

/* At quality 50, natural order: q(u, v) = round(base × (1 + slope × (u + v))). */
#define LUMA_BASE 19.0
#define LUMA_SLOPE 0.05
#define CHROMA_BASE 9.5
#define CHROMA_SLOPE 0.10
static unsigned int quant_tables[2][DCTSIZE2];
static int tables_ready;

static void default_tables(void) {
  for (int i = 0; i < DCTSIZE2; i++) {
    const int diagonal = i / DCTSIZE + i % DCTSIZE;
    quant_tables[0][i] = (unsigned int)(LUMA_BASE * (1.0 + LUMA_SLOPE * diagonal) + 0.5);
    quant_tables[1][i] = (unsigned int)(CHROMA_BASE * (1.0 + CHROMA_SLOPE * diagonal) + 0.5);
  }
  tables_ready = 1;
}

/* The tuning bench's knobs. */
EMSCRIPTEN_KEEPALIVE void sr_set_deadzone(int luma, int chroma) {
  sr_deadzone_permille[0] = luma < 0 ? 0 : luma > 400 ? 400 : luma;
  sr_deadzone_permille[1] = chroma < 0 ? 0 : chroma > 400 ? 400 : chroma;
}
EMSCRIPTEN_KEEPALIVE void sr_set_dither(int on) { dither = on != 0; }
EMSCRIPTEN_KEEPALIVE void sr_set_scans(int ours) { own_scans = ours != 0; }

/* Replaces the tables (natural order, at quality 50); NULL for libjpeg's Annex K tables. */
EMSCRIPTEN_KEEPALIVE void sr_set_quant_tables(const uint16_t *luma, const uint16_t *chroma) {
  annex_k = !luma || !chroma;
  tables_ready = 1;
  for (int i = 0; !annex_k && i < DCTSIZE2; i++) {
    quant_tables[0][i] = luma[i];
    quant_tables[1][i] = chroma[i];
  }
}

void sr_set_quality(j_compress_ptr c, int quality) {
  if (annex_k) {
    jpeg_set_quality(c, quality, TRUE);
    return;
  }
  if (!tables_ready) default_tables();
  const int scale = jpeg_quality_scaling(quality);
  for (int t = 0; t < 2; t++) {
    unsigned int table[DCTSIZE2];
    for (int i = 0; i < DCTSIZE2; i++) {
      const double step = (double)quant_tables[t][i] * scale / 100.0;
      const double golden = i * 0.6180339887;
      const double offset = !dither || i == 0 ? 0.5 : golden - (int)golden;
      const int q = (int)(step + offset);
      table[i] = (unsigned int)(q < 1 ? 1 : q > 255 ? 255 : q);
    }
    jpeg_add_quant_table(c, t, table, 100, TRUE);
  }
}

#define SCAN(n, a, b, c, ss, se, ah, al) {n, {a, b, c, 0}, ss, se, ah, al}
static const jpeg_scan_info COLOUR_SCANS[] = {
  SCAN(3, 0, 1, 2, 0, 0, 0, 0),                                  /* DC of all three */
  SCAN(1, 0, 0, 0, 1, 2, 0, 0),  SCAN(1, 0, 0, 0, 3, 63, 0, 1),  /* Y: lowest AC; the rest, halved */
  SCAN(1, 1, 0, 0, 1, 2, 0, 0),  SCAN(1, 1, 0, 0, 3, 63, 0, 0),  /* Cb */
  SCAN(1, 2, 0, 0, 1, 2, 0, 0),  SCAN(1, 2, 0, 0, 3, 63, 0, 0),  /* Cr */
  SCAN(1, 0, 0, 0, 3, 63, 1, 0),                                 /* Y: the last bit of the rest */
};

/* Progressive: our script for three components, libjpeg's for grey and four-component images. */
void sr_progression(j_compress_ptr c) {
  jpeg_simple_progression(c);
  if (c->num_components != 3 || !own_scans) return;
  c->scan_info = COLOUR_SCANS;
  c->num_scans = (int)(sizeof(COLOUR_SCANS) / sizeof(COLOUR_SCANS[0]));
}
