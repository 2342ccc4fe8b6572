/*
 * What the engine's encoder does with a quality: the quantisation tables, how they are scaled and
 * rounded, and the progressive scan script. Each choice was measured on its own with
 * `npm run bench -- jpeg-tuning` (bytes at equal SSIM against sharp's MozJPEG; docs/benchmarks.md),
 * and each stays settable from there, so the rows of that table can be measured again:
 * - tables that rise with frequency, q(u, v) = b × (1 + s d + c d²) at quality 50, d = u + v, chosen per
 *   quality (ANCHORS below): luma concave at 60 and 80 (jpegli's shape) with its first horizontal and
 *   vertical AC steps finer and (0, 2), (2, 0) coarser, straight at 90; chroma steeper at 80 than at
 *   60 and 90. Tuned on camera photos by bytes at equal SSIMULACRA2, butteraugli and SSIM
 *   against sharp's MozJPEG (`npm run bench -- jpeg-camera`); the flatter tables before (luma b = 19,
 *   s = 0.05, tuned on wallpapers for SSIM alone; then straight luma, chroma s = 0.10) spent bytes on
 *   sensor noise that no metric rewards;
 * - scaled as libjpeg scales (jpeg_quality_scaling), but each entry rounded with its own offset (a
 *   golden-ratio sequence over the positions) rather than all at .5: with one rounding, the entries of
 *   a diagonal all change at the same quality, so neighbouring qualities were often byte-identical and
 *   the next one 10 % larger; staggered, each quality moves a few entries and sizes step more evenly;
 * - trellis quantisation (sr_trellis.c), which replaced the earlier dead zone (patches/01, kept at 0
 *   for the tuning bench's older rows), its λ and energy knee per quality (the anchors below);
 * - a scan script of our own for colour images: DC, then each component's lowest two AC coefficients
 *   and the rest in separate scans, luma's rest first at half precision and refined last. Separate
 *   bands get their own optimised Huffman tables; it beat libjpeg's jpeg_simple_progression by 5 %.
 */
#include <emscripten.h>
#include <string.h>

#include "sr_jpeg.h"

int sr_deadzone_permille[2] = {0, 0};
static int dither = 1;
static int own_scans = 1;
static int annex_k; /* set by sr_set_quant_tables(NULL, NULL): libjpeg's own tables */

/*
 * The tables per quality: at quality 50, natural order, q(u, v) = round(b × (1 + s d + c d²) × l(u, v)),
 * d = u + v, l = e at the DC, f at (0, 1) and (1, 0), g at (0, 2) and (2, 0), 1 elsewhere; then scaled as
 * libjpeg scales. Each anchor gives a quality's shape (b, s, c, f, g, e) for luma and for chroma; a quality
 * between two anchors takes the straight line between them in each of the twelve numbers, one outside the nearest
 * anchor's. The bases are the calibration: each anchor's quality lands within a SSIMULACRA2 point of
 * MozJPEG's same quality on the median camera photo, so `quality` asks for what a caller of MozJPEG
 * would expect. The shapes, measured on camera photos by bytes at equal SSIMULACRA2 against sharp's
 * MozJPEG (docs/benchmarks.md, "JPEG on camera photos"):
 * - luma at 60 and 80 is concave, the shape of jpegli's tables (least squares on its steps): the DC
 *   and first diagonal finer than a straight line's, twice its slope at the start, levelling off over
 *   the high frequencies. SSIMULACRA2 pays for the lowest frequencies and little for the middle ones,
 *   where a camera photo's sensor noise is: at 60 this table is coarser on the whole than the straight
 *   one it replaced, and lands at the same score with fewer bytes;
 * - at 60 and 80 the first horizontal and vertical AC steps finer than the smooth table's (f = 0.7 and
 *   0.9; at 80 one step above the DC where the smooth table puts them two), (0, 2) and (2, 0) coarser
 *   (g = 1.25): of jpegli's whole tables given to our encoder at 80, which write 7 % fewer
 *   bytes than ours at equal SSIMULACRA2, those steps of u, v ≤ 2 carry all of the gain (its steps over
 *   d ≥ 3 none), and the one step finer at (0, 1) and (1, 0) most of it. A smooth table in d misses
 *   them whatever its fit. At 60 the finer f = 0.7, with the base raised to 12 to keep the calibration
 *   and chroma's f and g as at 80, took butteraugli under MozJPEG's (1.008 → 0.988 of its bytes at
 *   equal butteraugli on the 31 camera photos, SSIM 1.030 → 1.014, SSIMULACRA2 0.902 → 0.900) and cost
 *   the wallpapers 4 % on SSIMULACRA2 (0.910 → 0.948, still under MozJPEG's). At 90 g = 1.35 was level
 *   on camera photos and cost butteraugli 2 %;
 * - chroma at 80 rises more steeply (s = 0.50) and levels off (c = −0.012), the least-squares shape
 *   of jpegli's Cb and Cr tables (their geometric mean), with the same two factors (at 60 too), its
 *   first ring finer still at 80 (f = 0.8: 1 % fewer bytes at equal SSIMULACRA2 on the 31 camera
 *   photos, butteraugli level, and the wallpapers better on all three; at 90 too, where it won 0.4 % on
 *   SSIMULACRA2 and 1 % on butteraugli, the wallpapers level): a camera's chroma
 *   above the first few frequencies is mostly noise. jpegli's steeper, convex Cb shape won 0.4 % more on
 *   ten camera photos and cost the wallpapers' butteraugli 7 % and SSIM 8 %;
 * - chroma's DC step at 80 and 90 is ¾ of the smooth table's (e = 0.75): at 4:2:0 one chroma DC covers
 *   16 × 16 pixels, and its error is a flat colour cast over them that both SSIMULACRA2 and butteraugli
 *   see in smooth areas, where our encodes lost to MozJPEG's at the same bytes. On the 31 camera photos
 *   at 80 it won 1 % at equal SSIMULACRA2 and 2.5 % at equal butteraugli, the wallpapers level; a finer
 *   DC for luma lost on both. At 60 it won 0.4 % and cost the wallpapers' butteraugli 1 %, so 60 keeps
 *   the table's (e = 1); at 90 the step rounds to what it was;
 * - luma at 90 stays straight (b = 17, s = 0.16): no concave shape tried there won on both the camera
 *   photos and the wallpapers;
 * - the trellis's λ at 90 smaller than at 60 (0.045 step² a bit for luma, 0.025 for chroma, against
 *   0.060), rising with the block's AC energy from a knee of 1,448 (MozJPEG's, against 600): less is
 *   zeroed, chroma least. On the 31 camera photos it took butteraugli under MozJPEG's (1.032 → 0.984
 *   of its bytes at equal butteraugli) and SSIMULACRA2 from 0.938 to 0.919. Chroma's λ is what
 *   butteraugli pays for; luma's at 0.040 put the Nikon D90 over 1.10 of MozJPEG's bytes at equal
 *   SSIMULACRA2 (1.11; at 0.045 it is 1.098). At 60 MozJPEG's λ (0.053, knee 1,448) lost on all
 *   three: 60 keeps 0.060 and 600;
 * - at 80 60's λ except in the flattest blocks: a quarter of it at no AC energy (0.015), rising to
 *   60's again at an energy of 75 (0.015 × (1 + energy / 150) + 0.045 × energy / 75 below it; 0.060 ×
 *   (1 + energy / 600) from it). Butteraugli's worst spots at 80 were in flat and low-activity blocks,
 *   where the trellis zeroed the small coefficients that carry their shading. A quarter of the λ in
 *   every block, up to the busiest (0.015 × (1 + energy / 150)), did as well on butteraugli but spent
 *   the bytes on smooth, finely textured photos too: quality 80 scored 2.6 SSIMULACRA2 points over
 *   MozJPEG's on the camera photos resized to 1,280 px (1.6 with the bases below), 0.8 with this. The
 *   bases are × 1.07 (luma 11.8 → 12.626, chroma 10.3 → 11.021) to keep the calibration on the camera
 *   photos (−0.2). On the 31 camera photos it took butteraugli under MozJPEG's (1.062 → 0.997 of its
 *   bytes at equal butteraugli) and SSIMULACRA2 from 0.924 to 0.937. No λ in 80's old form (base × (1
 *   + energy / knee) with a knee of 600 or more) went under 1.038;
 * - chroma at 60 and 90 rises three times as steeply as before (s = 0.30, was 0.10). A Cr table of
 *   its own (jpegli's Cr is nearly flat, its Cb steep) lost at 80 and 90 with smooth tables and was
 *   level with jpegli's exact ones, so Cb and Cr share one.
 * The cost, where the metrics pull apart: at equal SSIM 2–5 % more bytes on camera photos and 3–13 % on
 * wallpapers than the tables before them, and quality 80's λ and bases 1.7 % and 4.3 % more
 * (docs/benchmarks.md).
 */
struct shape {
  double base, slope, curve;
  double first, second; /* × the steps at (0, 1) and (1, 0); × those at (0, 2) and (2, 0) */
  double dc;            /* × the DC's step */
};
static const struct anchor {
  int quality;
  struct shape table[2]; /* luma, chroma */
  /* the trellis's λ bases (step² per bit), luma's and chroma's, and its energy knee; then the λ the
   * flattest blocks go without, added back as the energy rises to the last field (sr_trellis.c) */
  double lambda, chroma_lambda, knee, flat, flat_knee;
} ANCHORS[] = {
  {60, {{12.0, 0.494, -0.0091, 0.7, 1.25, 1.0}, {11.0, 0.30, 0.0, 0.9, 1.25, 1.0}}, 0.060, 0.060, 600, 0, 75},
  {80, {{12.626, 0.37, -0.006, 0.9, 1.25, 1.0}, {11.021, 0.50, -0.012, 0.8, 1.25, 0.75}}, 0.015, 0.015, 150, 0.045, 75},
  {90, {{17.0, 0.16, 0.0, 1.0, 1.0, 1.0}, {11.0, 0.30, 0.0, 0.8, 1.0, 0.75}}, 0.045, 0.025, 1448, 0, 75},
};
#define ANCHOR_COUNT (int)(sizeof(ANCHORS) / sizeof(ANCHORS[0]))
static unsigned int quant_tables[3][DCTSIZE2]; /* set by sr_set_quant_tables: used at every quality */
/* The anchors' bases × these thousandths (luma, chroma): the tuning benches' way to move every quality
 * at once, e.g. to recalibrate after a change to quantisation (sr_set_table_scale). */
static int table_scale_milli[2] = {1000, 1000};
EMSCRIPTEN_KEEPALIVE void sr_set_table_scale(int luma_milli, int chroma_milli) {
  table_scale_milli[0] = luma_milli < 100 ? 100 : luma_milli;
  table_scale_milli[1] = chroma_milli < 100 ? 100 : chroma_milli;
}
static int tables_set;

/* The anchors either side of a quality (*a, *b) and how far between them it lies (0 to 1). */
static double anchors_around(int quality, const struct anchor **a, const struct anchor **b) {
  int i = 0;
  while (i < ANCHOR_COUNT - 1 && ANCHORS[i + 1].quality <= quality) i++;
  *a = &ANCHORS[i];
  *b = &ANCHORS[i + 1 < ANCHOR_COUNT ? i + 1 : i];
  const double t = (*b)->quality == (*a)->quality ? 0.0 : (double)(quality - (*a)->quality) / ((*b)->quality - (*a)->quality);
  return t < 0.0 ? 0.0 : t;
}

static void anchored_tables(int quality, unsigned int out[3][DCTSIZE2]) {
  const struct anchor *a, *b;
  const double t = anchors_around(quality, &a, &b);
  for (int c = 0; c < 2; c++) {
    const struct shape *p = &a->table[c], *q = &b->table[c];
    const double scale = table_scale_milli[c] / 1000.0;
    const double base = (p->base + t * (q->base - p->base)) * scale, slope = p->slope + t * (q->slope - p->slope),
                 curve = p->curve + t * (q->curve - p->curve), first = p->first + t * (q->first - p->first),
                 second = p->second + t * (q->second - p->second), dc = p->dc + t * (q->dc - p->dc);
    for (int k = 0; k < DCTSIZE2; k++) {
      const int d = k / DCTSIZE + k % DCTSIZE;
      const double low = k == 0 ? dc : d == 1 ? first : (k == 2 || k == 2 * DCTSIZE) ? second : 1.0;
      out[c][k] = (unsigned int)(base * (1.0 + slope * d + curve * d * d) * low + 0.5);
    }
  }
  memcpy(out[2], out[1], sizeof(out[1])); /* Cb's for Cr: a Cr table of its own is only the tuning bench's */
}

/* The tuning bench's knobs. */
EMSCRIPTEN_KEEPALIVE void sr_set_deadzone(int luma, int chroma) {
  sr_deadzone_permille[0] = luma < 0 ? 0 : luma > 400 ? 400 : luma;
  sr_deadzone_permille[1] = chroma < 0 ? 0 : chroma > 400 ? 400 : chroma;
}
EMSCRIPTEN_KEEPALIVE void sr_set_dither(int on) { dither = on != 0; }
EMSCRIPTEN_KEEPALIVE void sr_set_scans(int ours) { own_scans = ours != 0; }

/* Replaces the tables (natural order, at quality 50); cr NULL for Cb's; luma or chroma NULL for libjpeg's
 * Annex K tables. */
EMSCRIPTEN_KEEPALIVE void sr_set_quant_tables(const uint16_t *luma, const uint16_t *chroma, const uint16_t *cr) {
  annex_k = !luma || !chroma;
  tables_set = !annex_k;
  for (int i = 0; !annex_k && i < DCTSIZE2; i++) {
    quant_tables[0][i] = luma[i];
    quant_tables[1][i] = chroma[i];
    quant_tables[2][i] = cr ? cr[i] : chroma[i];
  }
}

/*
 * Chroma downsampled for the decoder's upsampling (patches/04-jcsample-chroma-sharpen.patch), where the
 * re-encode rule (sr_align_tables, below) applies and at least half of chroma's steps are finer than the
 * input's (SHARPEN_MIN_FINER). Re-encoding a 4:2:0
 * JPEG whose chroma blocks line up with ours, the best half-resolution chroma is the input's own: the decoder made the full-resolution chroma from it
 * by its triangle upsampling, and our box average of that is the input's chroma blurred, so its
 * coefficients leave the input's multiples and are re-quantised with new error on the input's grid.
 * The downsampling that inverts the triangle gets the input's chroma back (on a 4:2:0 phone photo at
 * quality 100: 49.9 dB → 57.7 dB chroma PSNR against the decoded input, strength 0.45–0.5 best), so
 * the steps raised to the input's re-encode it nearly without new error. On photos whose chroma does not line up
 * (4:2:2 or 4:4:4 input, resized) the sharper chroma only costs bytes, and with few steps raised it
 * cost more than it gave (docs/benchmarks.md).
 * sr_chroma_sharpen_permille is this encode's strength (0 for the box), read by jcsample.c; set per
 * encode: 0 by sr_set_quality, chroma_sharpen_milli by sr_align_tables. The tuning bench may set
 * another strength, or every 4:2:0 encode (sr_set_chroma_sharpen).
 */
int sr_chroma_sharpen_permille;
/* Half of chroma's table: with fewer of our steps finer than the input's, the sharper chroma cost more
 * than it gave (camera photos at quality 80 with 12 and 30, at 90 with 28; docs/benchmarks.md). */
#define SHARPEN_MIN_FINER 32
static int chroma_sharpen_milli = 500;
static int chroma_sharpen_where; /* 0: as above; 1: every 4:2:0 encode; 2: wherever chroma lines up */
EMSCRIPTEN_KEEPALIVE void sr_set_chroma_sharpen(int permille, int where) {
  chroma_sharpen_milli = permille < 0 ? 0 : permille > 1000 ? 1000 : permille;
  chroma_sharpen_where = where;
}

void sr_set_quality(j_compress_ptr c, int quality) {
  sr_chroma_sharpen_permille = chroma_sharpen_where == 1 ? chroma_sharpen_milli : 0;
  const struct anchor *a, *b;
  const double t = anchors_around(quality, &a, &b);
  sr_trellis_lambda((int)((a->lambda + t * (b->lambda - a->lambda)) * 1000.0 + 0.5),
                    (int)(a->knee + t * (b->knee - a->knee) + 0.5),
                    (int)((a->chroma_lambda + t * (b->chroma_lambda - a->chroma_lambda)) * 1000.0 + 0.5),
                    (int)((a->flat + t * (b->flat - a->flat)) * 1000.0 + 0.5),
                    (int)(a->flat_knee + t * (b->flat_knee - a->flat_knee) + 0.5));
  if (annex_k) {
    jpeg_set_quality(c, quality, TRUE);
    return;
  }
  unsigned int at50[3][DCTSIZE2];
  if (tables_set) memcpy(at50, quant_tables, sizeof(at50));
  else anchored_tables(quality, at50);
  const int scale = jpeg_quality_scaling(quality);
  unsigned int table[3][DCTSIZE2];
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < DCTSIZE2; i++) {
      const double step = (double)at50[t][i] * scale / 100.0;
      const double golden = i * 0.6180339887;
      const double offset = !dither || i == 0 ? 0.5 : golden - (int)golden;
      const int q = (int)(step + offset);
      table[t][i] = (unsigned int)(q < 1 ? 1 : q > 255 ? 255 : q);
    }
  jpeg_add_quant_table(c, 0, table[0], 100, TRUE);
  jpeg_add_quant_table(c, 1, table[1], 100, TRUE);
  /* Cr's own table only where it differs from Cb's: a third table costs 69 bytes of header. */
  if (c->jpeg_color_space == JCS_YCbCr && c->num_components == 3 && memcmp(table[1], table[2], sizeof(table[1]))) {
    jpeg_add_quant_table(c, 2, table[2], 100, TRUE);
    c->comp_info[2].quant_tbl_no = 2;
  }
}

/*
 * A JPEG re-encoded at full size keeps its 8×8 blocks: decoding and encoding again gives back the input's
 * coefficients, each a multiple of the input's step plus a little rounding noise. A step a little finer
 * than the input's puts the multiples between our steps, so the re-encode adds error where the input had
 * none (SSIM then falls while quality rises) and spends bits on the noise. So where the blocks line up,
 * a step of ours finer than the input's but at least half of it is raised to the input's: the output
 * stays closer to the input and costs fewer bytes (the five corpus JPEGs saved at quality 75–85: 2–24 %
 * fewer at equal SSIM, interpolated). A step under half the input's is kept: the caller asked for more
 * than the input holds, and raising it would cap the output at the input's quality (a 13 MP phone photo
 * saved near quality 50, at our quality 90: 1.09 → 0.93 of MozJPEG's bytes at equal SSIMULACRA2 with
 * the half; camera photos, docs/benchmarks.md). The blocks line up when nothing is resized and the
 * sampling is the input's; turned upright by EXIF, when each stored axis the turn mirrors is whole MCUs
 * (else its partial edge blocks move), with the table transposed for the quarter turns. Nearly all of
 * the gain is chroma's: our chroma steps are half luma's, far finer than a camera's chroma table at mid
 * and high frequencies (raising chroma's alone: 2–24 %; luma's alone: under 1 %, either way, and on
 * camera photos whose chroma sampling differs from ours, where luma's blocks still line up, within
 * 0.5 %). Snapping every step to a whole multiple of the input's (nearest) lost on camera photos.
 * Off, for one table only, or another rule (sr_set_align), only for the tuning bench.
 */
static int align_tables = 3; /* bit 0: luma's table, bit 1: chroma's; bit 2: luma's also where the chroma sampling differs */
/* The tuning bench's other rules (sr_set_align): 0 as above, raised from align_factor_milli thousandths
 * of the input's step (0: every finer step); 1, 2, 3: every step onto the nearest, the next finer or the
 * next coarser whole multiple of the input's. */
static int align_rule, align_factor_milli = 500;
EMSCRIPTEN_KEEPALIVE void sr_set_align(int tables, int rule, int factor_milli) {
  align_tables = tables & 7;
  align_rule = rule;
  align_factor_milli = factor_milli;
}


/*
 * libjpeg takes a component's table when its first scan starts, so a table defined (or redefined)
 * after the header's first scan may be the one the image used. Such files are rare; they keep our
 * tables. This walks the markers from the first scan to the image's end: in entropy-coded data a 0xFF
 * is followed only by 0x00 (stuffing), 0xFF (fill) or a restart marker; other segments are skipped by
 * their length. What follows the end (an appended preview or video, as phones write) is not this image.
 */
static int tables_defined_later(const sr_job *job) {
  const uint8_t *p = job->input + job->input_q_after, *end = job->input + job->input_len;
  while (p + 1 < end && (p = memchr(p, 0xFF, (size_t)(end - p - 1)))) {
    const uint8_t m = p[1];
    if (m == 0x00 || m == 0xFF || (m >= 0xD0 && m <= 0xD7)) p++;
    else if (m == 0xD9) return 0;
    else if (m == 0xDB) return 1;
    else if (p + 4 > end || (size_t)(2 + ((p[2] << 8) | p[3])) > (size_t)(end - p)) return 0;
    else p += 2 + ((p[2] << 8) | p[3]);
  }
  return 0;
}

/* Which stored axes a turn to upright mirrors (sr_encode.c, oriented_row): partial edge blocks there move. */
static int mirrors_x(int o) { return o == 2 || o == 3 || o == 7 || o == 8; }
static int mirrors_y(int o) { return o == 3 || o == 4 || o == 6 || o == 7; }

void sr_align_tables(sr_job *job, j_compress_ptr c) {
  if (!align_tables || !job->input_q_ok || job->source || job->scale_num != 8) return;
  const int32_t *info = job->info;
  const int o = job->orientation, transposed = o >= 5;
  if (job->out_w != info[SR_INFO_WIDTH] || job->out_h != info[SR_INFO_HEIGHT] || c->num_components != info[SR_INFO_COMPONENTS]) return;
  if ((mirrors_x(o) && info[SR_INFO_WIDTH] % (8 * info[SR_INFO_MAX_H])) || (mirrors_y(o) && info[SR_INFO_HEIGHT] % (8 * info[SR_INFO_MAX_V]))) return;
  int sampled_alike = 1;
  for (int ci = 0; ci < c->num_components; ci++) {
    const int h = info[SR_INFO_SAMP + ci * 2], v = info[SR_INFO_SAMP + ci * 2 + 1];
    if (c->comp_info[ci].h_samp_factor != (transposed ? v : h) || c->comp_info[ci].v_samp_factor != (transposed ? h : v)) sampled_alike = 0;
  }
  if (!sampled_alike && !(align_tables & 4)) return;
  if (!job->input_q_checked) {
    job->input_q_checked = 1;
    if (tables_defined_later(job)) job->input_q_ok = 0;
  }
  if (!job->input_q_ok) return;
  int finer = 0; /* chroma's steps finer than the input's, raised or not */
  /* Table 2, Cr's where it has its own, is raised to the finer of the input's two chroma steps, as Cb's. */
  for (int t = 0; t < (c->num_components == 3 ? 3 : 1); t++) {
    const int in = t ? 1 : 0;
    if (!(align_tables >> in & 1) || (in && !sampled_alike) || !c->quant_tbl_ptrs[t]) continue;
    UINT16 *q = c->quant_tbl_ptrs[t]->quantval;
    if (t == 1 && chroma_sharpen_where == 2) sr_chroma_sharpen_permille = chroma_sharpen_milli;
    for (int i = 0; i < DCTSIZE2; i++) {
      UINT16 s = job->input_q[in][transposed ? (i % DCTSIZE) * DCTSIZE + i / DCTSIZE : i];
      if (s > 255) s = 255; /* a baseline table's limit */
      if (s <= 1) continue;
      int to = q[i];
      if (align_rule) {
        int k = align_rule == 1 ? (q[i] + s / 2) / s : align_rule == 2 ? q[i] / s : (q[i] + s - 1) / s;
        if (k < 1) k = 1;
        to = (k * s > 255 ? 255 / s : k) * s;
      } else if (q[i] < s && q[i] * 1000 >= s * align_factor_milli) {
        to = s;
      }
      if (t == 1 && q[i] < s) finer++;
      q[i] = (UINT16)to;
    }
  }
  if (finer >= SHARPEN_MIN_FINER && chroma_sharpen_where == 0) sr_chroma_sharpen_permille = chroma_sharpen_milli;
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
