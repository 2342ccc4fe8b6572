// AVIF outputs decoded for assertions: by sharp, in Node (test/fixtures/avif-decoder.ts), since workerd
// has no AVIF decoder.
import { inject } from 'vitest';
import type { RgbaImage } from '../../wasm/image.ts';

export interface DecodedAvif extends RgbaImage {
  /** What sharp read the bytes as ('heif' for AVIF). */
  format: string;
  hasAlpha: boolean;
  /** The stored ICC profile's SHA-256 in hex; '' for none. */
  iccSha256: string;
  /** The EXIF payload ("Exif\0\0" and its TIFF block), empty for none. */
  exif: Uint8Array;
  /** The XMP packet as text, '' for none. */
  xmp: string;
}

export async function decodeAvif(bytes: Uint8Array): Promise<DecodedAvif> {
  const res = await fetch(inject('avifDecoder'), { method: 'POST', body: bytes });
  const data = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`sharp could not decode the AVIF: ${new TextDecoder().decode(data)}`);
  const header = (name: string) => res.headers.get(name) ?? '';
  return {
    data,
    width: Number(header('x-width')),
    height: Number(header('x-height')),
    format: header('x-format'),
    hasAlpha: header('x-has-alpha') === 'true',
    iccSha256: header('x-icc-sha256'),
    exif: Uint8Array.from(atob(header('x-exif-base64')), (c) => c.charCodeAt(0)),
    xmp: atob(header('x-xmp-base64')),
  };
}
