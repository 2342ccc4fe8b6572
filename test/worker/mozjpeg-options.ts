// MozJPEG's encoder options, apart from its WebAssembly: the tests (in workerd) and the benches (in Node)
// encode with the same tuning.

/** MozJPEG's options as its Embind binding requires them: every field present. */
export interface MozJpegOptions {
  quality: number;
  baseline: boolean;
  arithmetic: boolean;
  progressive: boolean;
  optimize_coding: boolean;
  smoothing: number;
  color_space: number;
  quant_table: number;
  trellis_multipass: boolean;
  trellis_opt_zero: boolean;
  trellis_opt_table: boolean;
  trellis_loops: number;
  auto_subsample: boolean;
  chroma_subsample: number;
  separate_chroma_quality: boolean;
  chroma_quality: number;
}

/** MozJPEG as Squoosh tunes it (progressive, trellis, the ImageMagick table), 4:2:0 below quality 90. */
export function jpegOptions(quality: number, grey = false): MozJpegOptions {
  return {
    quality,
    baseline: false,
    arithmetic: false,
    progressive: true,
    optimize_coding: true,
    smoothing: 0,
    color_space: grey ? 1 : 3, // greyscale or YCbCr
    quant_table: 3,
    trellis_multipass: false,
    trellis_opt_zero: false,
    trellis_opt_table: false,
    trellis_loops: 1,
    auto_subsample: false,
    chroma_subsample: quality >= 90 ? 1 : 2,
    separate_chroma_quality: false,
    chroma_quality: quality,
  };
}
