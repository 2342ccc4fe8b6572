// What an animated WebP's decoder holds (wasm/src/sr_webp_animdec.c, libwebp's WebPAnimDecoder), from
// its header alone: the file copied into the instance (the demuxer reads the frames from it), the
// canvas and the previous canvas after disposal (RGBA, libwebp's), JavaScript's copy of each composed
// canvas, and one frame's decoder: at most a lossless frame as large as the canvas, whose ARGB pixels
// VP8L holds whole beside its output (a lossy frame decodes into the canvas through a few rows).
/** A lossless frame's decoder per canvas pixel: VP8L's ARGB (4) and its transforms' and cache's share (2). */
export const WEBP_ANIM_FRAME_DECODER_BYTES_PER_PIXEL = 6;

export function webpAnimDecoderBytes(width: number, height: number, uploadBytes: number): number {
  const canvas = width * height * 4;
  return uploadBytes + 3 * canvas + width * height * WEBP_ANIM_FRAME_DECODER_BYTES_PER_PIXEL;
}
