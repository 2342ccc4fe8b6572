/*
 * High-bit-depth, wide-gamut and HDR (PQ, HLG) pictures to 8-bit sRGB, a row at a time: the HEIC decoder's
 * (sr_heicdec.c). docs/image-engine.md ("HEIC decoder", Colour) says the method and why:
 *
 *   1. Linearise: PQ by SMPTE ST 2084's EOTF (nits); HLG by BT.2100's inverse OETF, then its OOTF for a
 *      1,000-nit display (system gamma 1.2, on luminance); SDR transfers by the sRGB curve.
 *   2. HDR only: tone-map luminance by BT.2390's EETF (a Hermite knee in the PQ domain) from the mastering
 *      range (0–1,000 nits, or to a PQ picture's own content light level where the file gives one) onto
 *      0–203 nits, 203 being BT.2408's HDR reference white and taken as SDR white; RGB scaled by the same
 *      factor (hue kept). Below the knee (about 88 nits at a 1,000-nit peak) nothing changes.
 *   3. Primaries to BT.709 (BT.2087's matrix for BT.2020; Display P3's), then colours outside sRGB
 *      desaturated towards their own luminance just enough to fit (luminance and hue kept), not clipped
 *      channel by channel.
 *   4. sRGB-encoded, rounded with an 8×8 ordered (Bayer) dither by the pixel's place in the picture, so a
 *      smooth gradient of more than 8 bits does not band and the output is the same on every run.
 *
 * Per pixel the curves are table look-ups (sr_hdr_init builds them once per picture).
 */
#ifndef SR_HDR_H
#define SR_HDR_H

#include <math.h>
#include <stdint.h>

/* BT.2408's HDR reference white (nits): mapped to SDR white. */
#define SR_HDR_REFERENCE_WHITE 203.0f
/* The mastering peak assumed (nits): BT.2100 HLG's nominal display peak and a common PQ grading peak,
 * for a PQ picture that says none (sr_hdr_init_peak takes the one it says). Brighter PQ values are white. */
#define SR_HDR_PEAK 1000.0f
/* The range a PQ picture's own peak is taken in (nits): from twice reference white (a knee needs room
 * below the peak) to PQ's 10,000. */
#define SR_HDR_PEAK_MIN 406.0f
#define SR_HDR_PEAK_MAX 10000.0f
/* HLG's system gamma at a 1,000-nit display (BT.2100 Table 5). */
#define SR_HLG_GAMMA 1.2f
/* Table sizes: the tone curve between its knee and the peak, and the sRGB encoding over 0–1 (both
 * interpolated; errors far below a code value). */
#define SR_HDR_TONE_STEPS 2048
#define SR_HDR_ENCODE_STEPS 4096

enum { SR_HDR_SDR = 0, SR_HDR_PQ = 1, SR_HDR_HLG = 2 };

typedef struct sr_hdr {
  int transfer;         /* SR_HDR_* */
  const float *matrix;  /* to BT.709 primaries, or NULL */
  float wr, wg, wb;     /* the input's luminance weights */
  float wr709, wg709, wb709;
  uint32_t max_code;    /* the input's largest code value (255, 1023, 4095) */
  float *linear;        /* max_code + 1 entries: code value to linear light (nits for HDR, 0–1 for SDR) */
  float peak;           /* the mastering peak the EETF maps to reference white, in nits */
  float knee, knee_to_peak; /* the EETF's knee and the peak, in nits */
  float tone[SR_HDR_TONE_STEPS + 1]; /* output nits over input nits between knee and peak */
  float encode[SR_HDR_ENCODE_STEPS + 1]; /* linear 0–1 to sRGB 0–255 */
} sr_hdr;

/* Linear BT.2020 to linear BT.709 (BT.2087). */
static const float SR_BT2020_TO_709[9] = {1.6605f, -0.5876f, -0.0728f, -0.1246f, 1.1329f, -0.0083f,
                                          -0.0182f, -0.1006f, 1.1187f};
/* Linear Display P3 to linear sRGB. */
static const float SR_P3_TO_709[9] = {1.2249f, -0.2247f, 0.0f, -0.0420f, 1.0419f, 0.0f, -0.0197f, -0.0786f, 1.0979f};

/* The 8×8 Bayer matrix: thresholds 0–63, each row and column averaging 31.5. */
static const uint8_t SR_BAYER8[64] = {
    0,  32, 8,  40, 2,  34, 10, 42, 48, 16, 56, 24, 50, 18, 58, 26, 12, 44, 4,  36, 14, 46, 6,  38, 60, 28, 52, 20, 62, 30, 54, 22,
    3,  35, 11, 43, 1,  33, 9,  41, 51, 19, 59, 27, 49, 17, 57, 25, 15, 47, 7,  39, 13, 45, 5,  37, 63, 31, 55, 23, 61, 29, 53, 21};

static float sr_pq_eotf(float e) { /* SMPTE ST 2084: signal 0–1 to nits */
  const float m1 = 2610.0f / 16384, m2 = 2523.0f / 4096 * 128, c1 = 3424.0f / 4096, c2 = 2413.0f / 4096 * 32,
              c3 = 2392.0f / 4096 * 32;
  float p = powf(e > 0 ? e : 0, 1 / m2);
  float num = p - c1;
  if (num < 0) num = 0;
  return 10000.0f * powf(num / (c2 - c3 * p), 1 / m1);
}

static float sr_pq_inverse_eotf(float nits) { /* nits to signal 0–1 */
  const float m1 = 2610.0f / 16384, m2 = 2523.0f / 4096 * 128, c1 = 3424.0f / 4096, c2 = 2413.0f / 4096 * 32,
              c3 = 2392.0f / 4096 * 32;
  float y = powf((nits > 0 ? nits : 0) / 10000.0f, m1);
  return powf((c1 + c2 * y) / (1 + c3 * y), m2);
}

static float sr_hlg_inverse_oetf(float e) { /* BT.2100: signal to scene light 0–1 */
  const float a = 0.17883277f, b = 0.28466892f, c = 0.55991073f;
  return e <= 0.5f ? e * e / 3 : (expf((e - c) / a) + b) / 12;
}

static float sr_srgb_eotf(float e) { return e <= 0.04045f ? e / 12.92f : powf((e + 0.055f) / 1.055f, 2.4f); }

/* BT.2390's EETF from 0–peak onto 0–SR_HDR_REFERENCE_WHITE nits (no black level lift). */
static float sr_eetf_nits(float nits, float peak) {
  const float source = sr_pq_inverse_eotf(peak);
  const float max_lum = sr_pq_inverse_eotf(SR_HDR_REFERENCE_WHITE) / source;
  const float ks = 1.5f * max_lum - 0.5f;
  float e = sr_pq_inverse_eotf(nits) / source;
  if (e > 1) e = 1;
  if (e > ks) {
    float t = (e - ks) / (1 - ks), t2 = t * t, t3 = t2 * t;
    e = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * max_lum;
  }
  return sr_pq_eotf(e * source);
}

/* Prepares the tables for a picture of nclx primaries cp and transfer tc at bits per sample; linear must
 * hold (1 << bits) floats. A PQ picture's mastering peak is `peak` nits (its content light level, say),
 * SR_HDR_PEAK when 0, within SR_HDR_PEAK_MIN–SR_HDR_PEAK_MAX; HLG's is its nominal display's,
 * SR_HDR_PEAK. 0, or -1 when cp or tc is not one this converts. */
static int sr_hdr_init_peak(sr_hdr *h, int cp, int tc, int bits, float *linear, float peak) {
  h->transfer = tc == 16 ? SR_HDR_PQ : tc == 18 ? SR_HDR_HLG : SR_HDR_SDR;
  h->matrix = cp == 9 ? SR_BT2020_TO_709 : cp == 12 ? SR_P3_TO_709 : NULL;
  if (cp != 1 && cp != 2 && cp != 9 && cp != 12) return -1;
  h->wr709 = 0.2126f, h->wg709 = 0.7152f, h->wb709 = 0.0722f;
  if (cp == 9) h->wr = 0.2627f, h->wg = 0.6780f, h->wb = 0.0593f;
  else if (cp == 12) h->wr = 0.2290f, h->wg = 0.6917f, h->wb = 0.0793f;
  else h->wr = h->wr709, h->wg = h->wg709, h->wb = h->wb709;
  h->max_code = (1u << bits) - 1;
  h->linear = linear;
  for (uint32_t i = 0; i <= h->max_code; i++) {
    float e = (float)i / h->max_code;
    linear[i] = h->transfer == SR_HDR_PQ ? sr_pq_eotf(e) : h->transfer == SR_HDR_HLG ? sr_hlg_inverse_oetf(e) : sr_srgb_eotf(e);
  }
  h->peak = h->transfer != SR_HDR_PQ || peak <= 0 ? SR_HDR_PEAK
            : peak < SR_HDR_PEAK_MIN               ? SR_HDR_PEAK_MIN
            : peak > SR_HDR_PEAK_MAX               ? SR_HDR_PEAK_MAX
                                                   : peak;
  /* The knee: where the EETF starts to differ from the identity (its ks, in nits). */
  const float source = sr_pq_inverse_eotf(h->peak);
  const float max_lum = sr_pq_inverse_eotf(SR_HDR_REFERENCE_WHITE) / source;
  h->knee = sr_pq_eotf((1.5f * max_lum - 0.5f) * source);
  h->knee_to_peak = h->peak - h->knee;
  for (int i = 0; i <= SR_HDR_TONE_STEPS; i++) {
    float nits = h->knee + h->knee_to_peak * i / SR_HDR_TONE_STEPS;
    h->tone[i] = sr_eetf_nits(nits, h->peak) / nits;
  }
  for (int i = 0; i <= SR_HDR_ENCODE_STEPS; i++) {
    float v = (float)i / SR_HDR_ENCODE_STEPS;
    h->encode[i] = 255.0f * (v <= 0.0031308f ? v * 12.92f : 1.055f * powf(v, 1 / 2.4f) - 0.055f);
  }
  return 0;
}

/* sr_hdr_init_peak with the assumed peak. */
static int sr_hdr_init(sr_hdr *h, int cp, int tc, int bits, float *linear) {
  return sr_hdr_init_peak(h, cp, tc, bits, linear, 0);
}

static float sr_hdr_lookup(const float *table, int steps, float at) { /* at in 0–1, interpolated */
  float f = at * steps;
  int i = (int)f;
  if (i >= steps) return table[steps];
  return table[i] + (table[i + 1] - table[i]) * (f - i);
}

/* A value 0–255 (finer than a code) to a code, dithered by the pixel's place (x, y): a threshold of 1/128 to
 * 127/128 added, then floored, so on average it rounds. */
static inline uint8_t sr_dither(float v, uint32_t x, uint32_t y) {
  float d = v + (SR_BAYER8[(y & 7) * 8 + (x & 7)] + 0.5f) / 64.0f;
  if (!(d > 0)) return 0;
  return d >= 255 ? 255 : (uint8_t)d;
}

/* One row of samples (16-bit when wide, else 8-bit; RGB or RGBA by channels) at (x0, y) of the picture to
 * 8-bit sRGBA. out may be in and start at the same address: an output pixel is never wider than its input
 * and is written after the input is read. */
static void sr_hdr_row(const sr_hdr *h, const void *in, int wide, int channels, uint8_t *out, uint32_t width,
                       uint32_t x0, uint32_t y) {
  const uint16_t *in16 = (const uint16_t *)in;
  const uint8_t *in8 = (const uint8_t *)in;
  const float sdr_white = h->transfer == SR_HDR_SDR ? 1.0f : SR_HDR_REFERENCE_WHITE;
  for (uint32_t x = 0; x < width; x++) {
    uint32_t code[4] = {0, 0, 0, h->max_code};
    for (int c = 0; c < channels; c++) {
      uint32_t v = wide ? in16[x * channels + c] : in8[x * channels + c];
      code[c] = v > h->max_code ? h->max_code : v;
    }
    float rgb[3] = {h->linear[code[0]], h->linear[code[1]], h->linear[code[2]]};
    if (h->transfer == SR_HDR_HLG) { /* the OOTF: scene light to display nits */
      float ys = h->wr * rgb[0] + h->wg * rgb[1] + h->wb * rgb[2];
      float k = ys > 0 ? SR_HDR_PEAK * powf(ys, SR_HLG_GAMMA - 1) : 0;
      for (int c = 0; c < 3; c++) rgb[c] *= k;
    }
    if (h->transfer != SR_HDR_SDR) {
      float l = h->wr * rgb[0] + h->wg * rgb[1] + h->wb * rgb[2];
      float gain = 1;
      if (l >= h->peak) gain = SR_HDR_REFERENCE_WHITE / l;
      else if (l > h->knee) gain = sr_hdr_lookup(h->tone, SR_HDR_TONE_STEPS, (l - h->knee) / h->knee_to_peak);
      for (int c = 0; c < 3; c++) rgb[c] *= gain;
    }
    float o[3];
    for (int c = 0; c < 3; c++) {
      const float *m = h->matrix;
      o[c] = (m ? m[c * 3] * rgb[0] + m[c * 3 + 1] * rgb[1] + m[c * 3 + 2] * rgb[2] : rgb[c]) / sdr_white;
    }
    /* Outside sRGB: towards the colour's own luminance until it fits. */
    float lo = fminf(o[0], fminf(o[1], o[2])), hi = fmaxf(o[0], fmaxf(o[1], o[2]));
    if (lo < 0 || hi > 1) {
      float l = h->wr709 * o[0] + h->wg709 * o[1] + h->wb709 * o[2];
      l = l < 0 ? 0 : l > 1 ? 1 : l;
      float s = 1;
      if (hi > 1 && hi > l) s = fminf(s, (1 - l) / (hi - l));
      if (lo < 0 && l > lo) s = fminf(s, l / (l - lo));
      for (int c = 0; c < 3; c++) o[c] = l + (o[c] - l) * s;
    }
    uint8_t *q = out + x * 4;
    for (int c = 0; c < 3; c++) {
      float v = o[c] < 0 ? 0 : o[c] > 1 ? 1 : o[c];
      q[c] = sr_dither(sr_hdr_lookup(h->encode, SR_HDR_ENCODE_STEPS, v), x0 + x, y);
    }
    q[3] = (uint8_t)((code[3] * 255u + h->max_code / 2) / h->max_code);
  }
}

/* One row of more than 8 bits in a colour passed through (sRGB, the file's ICC, Display P3): rounded to 8
 * bits with the same dither, in place as sr_hdr_row. */
static void sr_reduce_row(const uint16_t *in, int channels, uint32_t max_code, uint8_t *out, uint32_t width,
                          uint32_t x0, uint32_t y) {
  const float scale = 255.0f / max_code;
  for (uint32_t x = 0; x < width; x++) {
    uint32_t code[4] = {0, 0, 0, max_code};
    for (int c = 0; c < channels; c++) code[c] = in[x * channels + c] > max_code ? max_code : in[x * channels + c];
    uint8_t *q = out + x * 4;
    for (int c = 0; c < 3; c++) q[c] = sr_dither(code[c] * scale, x0 + x, y);
    q[3] = (uint8_t)((code[3] * 255u + max_code / 2) / max_code);
  }
}

#endif
