// metadata=strip for a lossless JPEG XL transcode, which keeps everything libjxl is given (the jbrd box
// rebuilds the file byte for byte): libjxl is given the JPEG rewritten at the marker level, its coded
// data untouched, holding what the service's own JPEG output keeps under strip (metadata.ts): JFIF,
// Adobe and the ICC profile, no EXIF, XMP, IPTC or comments; an orientation other than 1 as an EXIF
// with that tag alone, since the transcode cannot turn the pixels. A gain map is image data
// (docs/decisions.md): primary and map are joined again, each stripped, by the JPEG output's writer,
// so the MPF offsets and the XMP directory describe the new file.
import type { GainMapSource } from '../gain-map/detect.ts';
import { joinPrimaryAndMap } from '../gain-map/write.ts';
import type { ImageHeader } from '../header.ts';
import { headSegments, stripJpeg } from '../jpeg-segments.ts';
import { storedPixelsFilter } from '../metadata.ts';

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * The JPEG libjxl is given under metadata=strip; null when its segments cannot be followed to the end of
 * the picture (the caller refuses it).
 */
export function strippedForTranscode(
  upload: Uint8Array,
  header: ImageHeader,
  gainMap: GainMapSource | undefined,
): Uint8Array | null {
  const markers = headSegments(upload);
  if (!markers) return null;
  // Anything after the picture's end (a gain map, MPF previews, a motion photo's video) is left behind.
  const primary = stripJpeg(upload, storedPixelsFilter(markers, header.jpeg?.components ?? 3, header.orientation));
  const map = gainMap?.map;
  if (!primary || !map) return primary;
  // The map keeps its own gain-map segments (hdrgm XMP, ISO 21496-1), as the JPEG output writes it.
  const strippedMap = stripJpeg(map.bytes, (m) =>
    map.markers.some((k) => k.code === m.code && sameBytes(k.data, m.data)) ? m.data : null,
  );
  return (strippedMap && joinPrimaryAndMap(primary, strippedMap, gainMap)) ?? primary;
}
