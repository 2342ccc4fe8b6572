// Output size: fit within the requested box keeping the aspect ratio, never larger than the input.

export interface Size {
  width: number;
  height: number;
}

/** The size to scale `input` to so it fits `box` (either side may be open); `input` when it already fits. */
export function fitWithin(input: Size, box: { width?: number; height?: number }): Size {
  const scale = Math.min(1, box.width ? box.width / input.width : 1, box.height ? box.height / input.height : 1);
  if (scale >= 1) return input;
  return {
    width: Math.min(box.width ?? Infinity, Math.max(1, Math.round(input.width * scale))),
    height: Math.min(box.height ?? Infinity, Math.max(1, Math.round(input.height * scale))),
  };
}
