// The XMP and ISO 21496-1 signs of a gain map. Ultra HDR (Google, Adobe's hdrgm namespace): the
// primary's XMP has hdrgm:Version and a Container:Directory whose GainMap item gives the map's length;
// the map's own XMP has its parameters (hdrgm:GainMapMin/Max, Gamma, OffsetSDR/HDR, HDRCapacityMin/Max).
// ISO 21496-1: an APP2 block under its URN in the primary (versions) and in the map (the parameters,
// binary). The parameters are kept as they are: the map's pixels change, its meaning does not.
import { ascii } from './segments.ts';

export const XMP_SIGNATURE = ascii('http://ns.adobe.com/xap/1.0/\0');
export const ISO_21496_SIGNATURE = ascii('urn:iso:std:iso:ts:21496:-1\0');

/** The hdrgm fields a map's XMP describes it with (attribute or element form). */
export const HDRGM_FIELDS = [
  'Version',
  'GainMapMin',
  'GainMapMax',
  'Gamma',
  'OffsetSDR',
  'OffsetHDR',
  'HDRCapacityMin',
  'HDRCapacityMax',
  'BaseRenditionIsHDR',
] as const;

/** The hdrgm fields found in an XMP packet, by name (values as written: one per channel stays a list). */
export function hdrgmFields(xmp: string): Partial<Record<(typeof HDRGM_FIELDS)[number], string>> {
  const out: Partial<Record<(typeof HDRGM_FIELDS)[number], string>> = {};
  for (const name of HDRGM_FIELDS) {
    const value =
      new RegExp(`hdrgm:${name}\\s*=\\s*["']([^"']*)["']`).exec(xmp)?.[1] ??
      new RegExp(`<hdrgm:${name}>([\\s\\S]*?)</hdrgm:${name}>`).exec(xmp)?.[1];
    if (value !== undefined) out[name] = value.trim();
  }
  return out;
}

/** Whether a primary's XMP announces a gain map (hdrgm:Version, or a directory item for one). */
export const announcesGainMap = (xmp: string): boolean =>
  hdrgmFields(xmp).Version !== undefined || /Item:Semantic\s*=\s*["']GainMap["']/.test(xmp);

/**
 * The XMP with its directory's GainMap item given `length` (the map as written now); unchanged when it
 * has no such item. Only that item's Item:Length moves: the rest of the packet stays byte for byte.
 */
export function withGainMapLength(xmp: string, length: number): string {
  return xmp.replace(/<Container:Item\b[^>]*>/g, (item) => {
    if (!/Item:Semantic\s*=\s*["']GainMap["']/.test(item)) return item;
    if (/Item:Length\s*=\s*["']\d*["']/.test(item))
      return item.replace(/(Item:Length\s*=\s*["'])\d*(["'])/, `$1${length}$2`);
    return item.replace(/\s*(\/?>)$/, ` Item:Length="${length}"$1`);
  });
}

/** The primary's XMP when the input's is stripped (metadata=strip): the gain map's directory and nothing else. */
export function primaryGainMapXmp(mapLength: number): string {
  return (
    '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' +
    '<rdf:Description xmlns:Container="http://ns.google.com/photos/1.0/container/" ' +
    'xmlns:Item="http://ns.google.com/photos/1.0/container/item/" ' +
    'xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0">' +
    '<Container:Directory><rdf:Seq>' +
    '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>' +
    '<rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" ' +
    `Item:Length="${mapLength}"/></rdf:li>` +
    '</rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>'
  );
}
