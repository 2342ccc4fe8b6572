/*
 * Separable Lanczos3 resampling through a ring of rows. Each input row is filtered horizontally as it
 * arrives and kept in the ring; an output row is filtered vertically from the ring as soon as the last
 * input row it needs has arrived. Memory: (vertical taps + 1) rows of the output width, whatever the
 * image height.
 *
 * The horizontal pass does most of the work (every input row, taps spanning the shrink factor), so for
 * RGB and RGBA rows it runs in 16-bit fixed point: two taps of all four channels per i32x4.dot_i16x8,
 * straight from the bytes. The weights are rounded to 1/16384 with their sum kept exact, and the
 * vertical weights carry the 1/16384, so the ring holds the same values as the float pass to within
 * rounding. Alpha-weighted RGBA goes in as (colour × alpha) / 4 and alpha × 64, both within 15 bits
 * (colour keeps 8 bits of precision down to alpha 4 of 255). 1–2 channels, and shrinks of more than
 * FIXED_MAX_TAPS taps a pixel (where 1/16384 steps would add up to visible error), keep the float pass.
 * (Over 300 lines: both passes work on the resampler's private state, which stays in this file.)
 */
#include <emscripten.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "sr_jpeg.h"

#define LANCZOS_A 3.0

typedef struct {
  int *first; /* first input index of each output index */
  int *count; /* taps of each output index */
  float *weights; /* count[i] weights of output i start at i * max_taps */
  int max_taps;
} axis_filter;

struct sr_resizer {
  int in_w, in_h, out_w, out_h, channels;
  int premultiply; /* RGBA: colour weighted by alpha (the PNG and WebP paths' rows that can be transparent) */
  axis_filter h, v;
  float *ring; /* ring_rows rows of out_w × channels */
  float *in_row; /* the input row as floats, one spare: RGB pixels are read four floats at a time */
  /* The fixed-point horizontal pass (RGB and RGBA): per output pixel, `pairs` vectors of eight 16-bit
   * weights, two taps for each channel; the input row as bytes, padded, or (alpha-weighted RGBA) as
   * 16-bit premultiplied samples, padded. */
  int16_t *h_fixed;
  int pairs;
  uint8_t *in_bytes;
  int16_t *in_premultiplied;
  /* The vertical pass's source rows and splatted weights for one output row (heap, not stack: a large
   * shrink has thousands of taps). */
  const float **pull_src;
  v128_t *pull_weights;
  float *acc_row; /* the vertical pass's sums, out_w × channels */
  int ring_rows;
  int pushed; /* input rows received */
  int pulled; /* output rows written */
};

static double sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= M_PI;
  return sin(x) / x;
}

static double lanczos3(double x) {
  x = fabs(x);
  return x < LANCZOS_A ? sinc(x) * sinc(x / LANCZOS_A) : 0.0;
}

/* The input span [lo, hi] output i of out_n takes from in_n inputs, and the kernel's support and
 * widening (what axis_init weighs it with): one rule for the filters and for the rows and columns a
 * cropped decode keeps (sr_resize_span). */
static void axis_taps(int in_n, int out_n, int i, int max_taps, double *center, int *lo, int *hi) {
  const double scale = (double)out_n / in_n;
  const double shrink = scale < 1.0 ? scale : 1.0;
  const double support = LANCZOS_A / shrink;
  *center = (i + 0.5) / scale - 0.5;
  *lo = (int)ceil(*center - support);
  *hi = (int)floor(*center + support);
  if (*lo < 0) *lo = 0;
  if (*hi > in_n - 1) *hi = in_n - 1;
  if (*hi - *lo + 1 > max_taps) *hi = *lo + max_taps - 1;
}

static int axis_max_taps(int in_n, int out_n) {
  const double scale = (double)out_n / in_n;
  const double shrink = scale < 1.0 ? scale : 1.0; /* widens the kernel when downscaling */
  return (int)ceil(LANCZOS_A / shrink * 2.0) + 2;
}

void sr_resize_span(int in_n, int out_n, int o0, int o1, int *i0, int *i1) {
  const int max_taps = axis_max_taps(in_n, out_n);
  *i0 = in_n;
  *i1 = 0;
  for (int i = o0; i < o1; i++) {
    double center;
    int lo, hi;
    axis_taps(in_n, out_n, i, max_taps, &center, &lo, &hi);
    if (lo < *i0) *i0 = lo;
    if (hi + 1 > *i1) *i1 = hi + 1;
  }
}

/* The filter of outputs [o0, o0 + on) of the whole in_n → out_n resample, each one's first input
 * counted from input i0: the same weights as the whole resample's, for a window of it. */
static int axis_init(axis_filter *f, int in_n, int out_n, int o0, int on, int i0) {
  const double scale = (double)out_n / in_n;
  const double shrink = scale < 1.0 ? scale : 1.0;
  f->max_taps = axis_max_taps(in_n, out_n);
  f->first = malloc(sizeof(int) * (size_t)on);
  f->count = malloc(sizeof(int) * (size_t)on);
  f->weights = malloc(sizeof(float) * (size_t)on * (size_t)f->max_taps);
  if (!f->first || !f->count || !f->weights) return -1;
  for (int k = 0; k < on; k++) {
    double center;
    int lo, hi;
    axis_taps(in_n, out_n, o0 + k, f->max_taps, &center, &lo, &hi);
    float *w = f->weights + (size_t)k * f->max_taps;
    double sum = 0.0;
    for (int j = lo; j <= hi; j++) sum += (w[j - lo] = (float)lanczos3((j - center) * shrink));
    if (sum == 0.0) { /* cannot happen with a centred kernel, but never divide by zero */
      lo = hi = (int)(center < 0 ? 0 : center > in_n - 1 ? in_n - 1 : center);
      w[0] = 1.0f;
      sum = 1.0;
    }
    for (int j = 0; j <= hi - lo; j++) w[j] = (float)(w[j] / sum);
    f->first[k] = lo - i0;
    f->count[k] = hi - lo + 1;
  }
  return 0;
}

#define FIXED_ONE 16384 /* 1.0 in the fixed-point weights (Q14: |weight| < 2 fits in 16 bits) */
/* Beyond this many taps a pixel the weights' 1/16384 steps could add up to half a level: float pass. */
#define FIXED_MAX_TAPS 64

/*
 * The horizontal weights in fixed point, two taps to a vector (see the top of the file). Each weight
 * is the step between rounded running sums, so every partial sum is within 1/32768 of the exact one
 * and the total is exactly 1: flat areas stay exactly flat.
 */
static int fixed_init(sr_resizer *rs) {
  const axis_filter *f = &rs->h;
  rs->pairs = (f->max_taps + 1) / 2;
  rs->h_fixed = calloc((size_t)rs->out_w * (size_t)rs->pairs * 8, sizeof(int16_t));
  if (rs->premultiply) /* four samples a pixel; a pair's load may reach one pixel past the row */
    rs->in_premultiplied = calloc((size_t)rs->in_w * 4 + 8, sizeof(int16_t));
  else /* a pair's load reads 16 bytes */
    rs->in_bytes = calloc((size_t)rs->in_w * (size_t)rs->channels + 32, 1);
  if (!rs->h_fixed || (!rs->in_bytes && !rs->in_premultiplied)) return -1;
  for (int x = 0; x < rs->out_w; x++) {
    const int n = f->count[x];
    const float *w = f->weights + (size_t)x * f->max_taps;
    int16_t *out = rs->h_fixed + (size_t)x * rs->pairs * 8;
    double running = 0.0;
    long before = 0;
    for (int j = 0; j < n; j++) {
      running += w[j];
      const long upto = lrint(running * FIXED_ONE);
      const int16_t q = (int16_t)(upto - before);
      before = upto;
      /* Lanes 2c and 2c + 1 hold channel c's taps 2p and 2p + 1; an RGB pixel leaves lanes 6 and 7 at 0. */
      for (int c = 0; c < rs->channels; c++) out[(j >> 1) * 8 + c * 2 + (j & 1)] = q;
    }
  }
  for (size_t i = 0; i < (size_t)rs->out_h * rs->v.max_taps; i++) rs->v.weights[i] /= FIXED_ONE;
  return 0;
}

static void axis_free(axis_filter *f) {
  free(f->first);
  free(f->count);
  free(f->weights);
}

void sr_resizer_destroy(sr_resizer *rs) {
  if (!rs) return;
  axis_free(&rs->h);
  axis_free(&rs->v);
  free(rs->ring);
  free(rs->in_row);
  free(rs->acc_row);
  free(rs->h_fixed);
  free(rs->in_bytes);
  free(rs->in_premultiplied);
  free(rs->pull_src);
  free(rs->pull_weights);
  free(rs);
}

sr_resizer *sr_resizer_create(int in_w, int in_h, int out_w, int out_h, int channels, int premultiply) {
  const sr_box all_out = {0, 0, out_w, out_h}, all_in = {0, 0, in_w, in_h};
  return sr_resizer_create_box(in_w, in_h, out_w, out_h, channels, premultiply, &all_out, &all_in);
}

sr_resizer *sr_resizer_create_box(int in_w, int in_h, int out_w, int out_h, int channels, int premultiply,
                                  const sr_box *out, const sr_box *in) {
  sr_resizer *rs = calloc(1, sizeof(sr_resizer));
  if (!rs) return NULL;
  rs->in_w = in->w;
  rs->in_h = in->h;
  rs->out_w = out->w;
  rs->out_h = out->h;
  rs->channels = channels;
  rs->premultiply = premultiply && channels == 4;
  if (axis_init(&rs->h, in_w, out_w, out->x, out->w, in->x) || axis_init(&rs->v, in_h, out_h, out->y, out->h, in->y)) {
    sr_resizer_destroy(rs);
    return NULL;
  }
  rs->ring_rows = rs->v.max_taps + 1;
  rs->ring = malloc(sizeof(float) * (size_t)rs->ring_rows * (size_t)out_w * (size_t)channels);
  const int fixed = (channels == 3 || channels == 4) && rs->h.max_taps <= FIXED_MAX_TAPS;
  if (!fixed) rs->in_row = malloc(sizeof(float) * ((size_t)rs->in_w * (size_t)channels + 1));
  rs->acc_row = malloc(sizeof(float) * (size_t)out_w * (size_t)channels);
  rs->pull_src = malloc(sizeof(float *) * (size_t)rs->v.max_taps);
  rs->pull_weights = aligned_alloc(16, sizeof(v128_t) * (size_t)rs->v.max_taps);
  if (!rs->ring || (!fixed && !rs->in_row) || !rs->acc_row || !rs->pull_src || !rs->pull_weights || (fixed && fixed_init(rs))) {
    sr_resizer_destroy(rs);
    return NULL;
  }
  return rs;
}

/*
 * The fixed-point horizontal pass for alpha-weighted RGBA. Each pixel becomes ((c·a + 2) >> 2, …,
 * a·64) in 16-bit lanes, then as push_fixed; the sums are scaled back by (4, 4, 4, 1/64), so the ring
 * holds colour × alpha and alpha, as the float pass leaves them.
 */
static void push_fixed_premultiplied(sr_resizer *rs, const uint8_t *row, float *dst) {
  int16_t *px16 = rs->in_premultiplied;
  const v128_t k256 = wasm_i16x8_splat(256), two = wasm_i16x8_splat(2);
  int x = 0;
  for (; x + 2 <= rs->in_w; x += 2) { /* two pixels a step */
    const v128_t px = wasm_u16x8_extend_low_u8x16(wasm_v128_load64_zero(row + x * 4));
    /* c·a ≤ 65,025 and a·256 ≤ 65,280: right as unsigned 16-bit products, then shifted down to 15 bits. */
    const v128_t weighted = wasm_i16x8_mul(px, wasm_i16x8_shuffle(px, k256, 3, 3, 3, 8, 7, 7, 7, 8));
    wasm_v128_store(px16 + x * 4, wasm_u16x8_shr(wasm_i16x8_add(weighted, two), 2));
  }
  if (x < rs->in_w) {
    const v128_t px = wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(row + x * 4));
    const v128_t weighted = wasm_i16x8_mul(px, wasm_i16x8_shuffle(px, k256, 3, 3, 3, 8, 3, 3, 3, 8));
    wasm_v128_store64_lane(px16 + x * 4, wasm_u16x8_shr(wasm_i16x8_add(weighted, two), 2), 0);
  }
  const v128_t zero = wasm_i32x4_splat(0);
  const v128_t scale = wasm_f32x4_make(4.0f, 4.0f, 4.0f, 1.0f / 64.0f);
  for (int x = 0; x < rs->out_w; x++) {
    const int16_t *src = px16 + (size_t)rs->h.first[x] * 4;
    const v128_t *w = (const v128_t *)(rs->h_fixed + (size_t)x * rs->pairs * 8);
    const int pairs = (rs->h.count[x] + 1) >> 1;
    v128_t acc = zero;
    for (int p = 0; p < pairs; p++, src += 8) {
      const v128_t two_px = wasm_v128_load(src);
      acc = wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(two_px, two_px, 0, 4, 1, 5, 2, 6, 3, 7), wasm_v128_load(w + p)));
    }
    wasm_v128_store(dst + x * 4, wasm_f32x4_mul(wasm_f32x4_convert_i32x4(acc), scale));
  }
}

/* The fixed-point horizontal pass (RGB or RGBA bytes, no alpha weighting) into the ring row `dst`. */
static void push_fixed(sr_resizer *rs, const uint8_t *row, float *dst) {
  const int ch = rs->channels;
  memcpy(rs->in_bytes, row, (size_t)rs->in_w * ch);
  const v128_t zero = wasm_i32x4_splat(0);
  for (int x = 0; x < rs->out_w; x++) {
    const uint8_t *src = rs->in_bytes + (size_t)rs->h.first[x] * ch;
    const v128_t *w = (const v128_t *)(rs->h_fixed + (size_t)x * rs->pairs * 8);
    const int pairs = (rs->h.count[x] + 1) >> 1;
    v128_t acc = zero;
    if (ch == 4) {
      for (int p = 0; p < pairs; p++, src += 8) {
        /* Two pixels' bytes as 16-bit lanes r0 r1 g0 g1 b0 b1 a0 a1. */
        const v128_t px = wasm_i8x16_shuffle(wasm_v128_load(src), zero, 0, 16, 4, 16, 1, 16, 5, 16, 2, 16, 6, 16, 3, 16, 7, 16);
        acc = wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(px, wasm_v128_load(w + p)));
      }
      wasm_v128_store(dst + x * 4, wasm_f32x4_convert_i32x4(acc));
    } else {
      for (int p = 0; p < pairs; p++, src += 6) {
        const v128_t px = wasm_i8x16_shuffle(wasm_v128_load(src), zero, 0, 16, 3, 16, 1, 16, 4, 16, 2, 16, 5, 16, 16, 16, 16, 16);
        acc = wasm_i32x4_add(acc, wasm_i32x4_dot_i16x8(px, wasm_v128_load(w + p)));
      }
      const v128_t f = wasm_f32x4_convert_i32x4(acc);
      dst[x * 3] = wasm_f32x4_extract_lane(f, 0);
      dst[x * 3 + 1] = wasm_f32x4_extract_lane(f, 1);
      dst[x * 3 + 2] = wasm_f32x4_extract_lane(f, 2);
    }
  }
}

/*
 * The horizontal pass. The row is turned into floats once (each input pixel feeds several outputs), and
 * an RGB pixel is one four-lane vector (the fourth lane, the next pixel's red, is computed and dropped),
 * so each tap is one multiply-add instead of three.
 */
void sr_resizer_push(sr_resizer *rs, const uint8_t *row) {
  const int ch = rs->channels;
  if (rs->h_fixed) {
    float *dst = rs->ring + (size_t)(rs->pushed % rs->ring_rows) * rs->out_w * ch;
    if (rs->premultiply) push_fixed_premultiplied(rs, row, dst);
    else push_fixed(rs, row, dst);
    rs->pushed++;
    return;
  }
  const int n_in = rs->in_w * ch;
  float *in = rs->in_row;
  if (rs->premultiply && ch == 4) {
    /* Colour weighted by alpha, so that transparent pixels do not bleed their hidden colour into edges:
     * each pixel one vector, times (a, a, a, 1). */
    const v128_t one = wasm_f32x4_splat(1.0f);
    for (int i = 0; i < n_in; i += 4) {
      const v128_t px = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(row + i)));
      const v128_t f = wasm_f32x4_convert_i32x4(px);
      wasm_v128_store(in + i, wasm_f32x4_mul(f, wasm_i32x4_shuffle(f, one, 3, 3, 3, 4)));
    }
  } else {
    int i = 0;
    for (; i + 16 <= n_in; i += 16) { /* sixteen bytes to sixteen floats */
      const v128_t b = wasm_v128_load(row + i);
      const v128_t lo = wasm_u16x8_extend_low_u8x16(b), hi = wasm_u16x8_extend_high_u8x16(b);
      wasm_v128_store(in + i, wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(lo)));
      wasm_v128_store(in + i + 4, wasm_f32x4_convert_i32x4(wasm_u32x4_extend_high_u16x8(lo)));
      wasm_v128_store(in + i + 8, wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(hi)));
      wasm_v128_store(in + i + 12, wasm_f32x4_convert_i32x4(wasm_u32x4_extend_high_u16x8(hi)));
    }
    for (; i < n_in; i++) in[i] = (float)row[i];
  }
  in[n_in] = 0.0f;
  float *dst = rs->ring + (size_t)(rs->pushed % rs->ring_rows) * rs->out_w * ch;
  for (int x = 0; x < rs->out_w; x++) {
    const float *w = rs->h.weights + (size_t)x * rs->h.max_taps;
    const float *src = in + (size_t)rs->h.first[x] * ch;
    const int n = rs->h.count[x];
    if (ch == 4) {
      v128_t acc = wasm_f32x4_splat(0.0f);
      for (int j = 0; j < n; j++, src += 4) acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_splat(w[j]), wasm_v128_load(src)));
      wasm_v128_store(dst + x * 4, acc);
    } else if (ch == 3) {
      v128_t acc = wasm_f32x4_splat(0.0f);
      for (int j = 0; j < n; j++, src += 3) acc = wasm_f32x4_add(acc, wasm_f32x4_mul(wasm_f32x4_splat(w[j]), wasm_v128_load(src)));
      dst[x * 3] = wasm_f32x4_extract_lane(acc, 0);
      dst[x * 3 + 1] = wasm_f32x4_extract_lane(acc, 1);
      dst[x * 3 + 2] = wasm_f32x4_extract_lane(acc, 2);
    } else {
      for (int c = 0; c < ch; c++) {
        float acc = 0;
        for (int j = 0; j < n; j++) acc += w[j] * src[j * ch + c];
        dst[x * ch + c] = acc;
      }
    }
  }
  rs->pushed++;
}

static inline uint8_t clamp_byte(float v) {
  if (v <= 0.0f) return 0;
  if (v >= 255.0f) return 255;
  return (uint8_t)(v + 0.5f);
}

/* clamp_byte of sixteen floats at once: v + 0.5 truncated, then saturated to 0..255 by the narrowings. */
static inline void clamp_bytes16(uint8_t *out, v128_t a, v128_t b, v128_t c, v128_t d) {
  const v128_t half = wasm_f32x4_splat(0.5f);
  const v128_t ab = wasm_i16x8_narrow_i32x4(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(a, half)),
                                            wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(b, half)));
  const v128_t cd = wasm_i16x8_narrow_i32x4(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(c, half)),
                                            wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(d, half)));
  wasm_v128_store(out, wasm_u8x16_narrow_i16x8(ab, cd));
}

/* An RGBA pixel's colour divided by its alpha again (0 where alpha rounds to nothing). */
static inline v128_t unpremultiply(v128_t px) {
  const float a = wasm_f32x4_extract_lane(px, 3);
  const float k = a > 0.5f ? 1.0f / a : 0.0f;
  return wasm_f32x4_mul(px, wasm_f32x4_make(k, k, k, 1.0f));
}

int sr_resizer_pull(sr_resizer *rs, uint8_t *row) {
  if (rs->pulled >= rs->out_h) return 0;
  const int y = rs->pulled;
  const int first = rs->v.first[y];
  const int n = rs->v.count[y];
  if (first + n > rs->pushed) return 0;
  const int width = rs->out_w * rs->channels;
  const float *w = rs->v.weights + (size_t)y * rs->v.max_taps;
  /* Four samples at a time, the sum kept in a register across the taps (each ring row is read once per
   * output row; the sums are stored once). */
  float *acc = rs->acc_row;
  const float **src = rs->pull_src;
  v128_t *wv = rs->pull_weights;
  for (int j = 0; j < n; j++) {
    src[j] = rs->ring + (size_t)((first + j) % rs->ring_rows) * width;
    wv[j] = wasm_f32x4_splat(w[j]);
  }
  int i = 0;
  for (; i + 4 <= width; i += 4) {
    v128_t sum = wasm_f32x4_mul(wv[0], wasm_v128_load(src[0] + i));
    for (int j = 1; j < n; j++) sum = wasm_f32x4_add(sum, wasm_f32x4_mul(wv[j], wasm_v128_load(src[j] + i)));
    wasm_v128_store(acc + i, sum);
  }
  for (; i < width; i++) {
    float sum = 0;
    for (int j = 0; j < n; j++) sum += w[j] * src[j][i];
    acc[i] = sum;
  }
  const int premultiplied = rs->premultiply && rs->channels == 4;
  i = 0;
  for (; i + 16 <= width; i += 16) {
    v128_t a = wasm_v128_load(acc + i), b = wasm_v128_load(acc + i + 4);
    v128_t c = wasm_v128_load(acc + i + 8), d = wasm_v128_load(acc + i + 12);
    if (premultiplied) a = unpremultiply(a), b = unpremultiply(b), c = unpremultiply(c), d = unpremultiply(d);
    clamp_bytes16(row + i, a, b, c, d);
  }
  if (premultiplied) {
    for (; i < width; i += 4) {
      const float a = acc[i + 3];
      const float k = a > 0.5f ? 1.0f / a : 0.0f;
      row[i] = clamp_byte(acc[i] * k);
      row[i + 1] = clamp_byte(acc[i + 1] * k);
      row[i + 2] = clamp_byte(acc[i + 2] * k);
      row[i + 3] = clamp_byte(a);
    }
  } else {
    for (; i < width; i++) row[i] = clamp_byte(acc[i]);
  }
  rs->pulled++;
  return 1;
}

/*
 * The resampler on its own, for rows decoded outside the engine (the PNG engine, in TypeScript):
 * 1, 2, 3 or 4 channels of 8 bits; with premultiply (RGBA only) colour is weighted by alpha. Returns
 * NULL when out of memory or the sizes are not positive.
 */
EMSCRIPTEN_KEEPALIVE sr_resizer *sr_resizer_new(int in_w, int in_h, int out_w, int out_h, int channels, int premultiply) {
  if (in_w < 1 || in_h < 1 || out_w < 1 || out_h < 1 || channels < 1 || channels > 4) return NULL;
  return sr_resizer_create(in_w, in_h, out_w, out_h, channels, premultiply);
}
EMSCRIPTEN_KEEPALIVE void sr_resizer_push_row(sr_resizer *rs, const uint8_t *row) { if (rs->pushed < rs->in_h) sr_resizer_push(rs, row); }
EMSCRIPTEN_KEEPALIVE int sr_resizer_pull_row(sr_resizer *rs, uint8_t *row) { return sr_resizer_pull(rs, row); }
EMSCRIPTEN_KEEPALIVE void sr_resizer_free(sr_resizer *rs) { sr_resizer_destroy(rs); }
