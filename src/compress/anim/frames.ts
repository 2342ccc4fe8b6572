// What every animated input hands the animation writer (anim-path.ts): its own file, imported by the
// decoders' folders (gif/) without importing the writer that imports them.
/** An animation's frames, composed on a canvas of `width` × `height`, handed out one at a time. */
export interface FrameSource {
  width: number;
  height: number;
  /** Frames handed out, and frames the file has (X-Frames). */
  written: number;
  total: number;
  /** Times the animation plays (WebP's loop count): 0 for ever. */
  loop: number;
  /** The colour profile the frames are in, carried to the output (none: sRGB). */
  icc?: Uint8Array;
  /** Each frame in turn: the canvas (RGBA, valid during the call) and how long it shows, in ms. */
  each(onFrame: (canvas: Uint8Array, durationMs: number) => Promise<void>): Promise<void>;
  /** Frees the decoder (once). */
  close(failed: boolean): void;
}
