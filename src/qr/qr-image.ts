// What /qr and /qr/image share: the options with their defaults, the checks that make a signed URL
// always renderable, the canonical form that gets signed, and the rendering itself.
import { ApiError } from '../errors.ts';
import { buildQr, QR_MAX_BYTES, QrDataTooLong, type Ecc, type QrSymbol } from './encode.ts';
import { minimumSize, renderPng, renderSvg } from './render.ts';
import type { SignedValues } from './signature.ts';

export const QR_FORMATS = ['png', 'svg'] as const;
export const QR_ECC_LEVELS = ['L', 'M', 'Q', 'H'] as const;
export const QR_SIZE_MIN = 50;
export const QR_SIZE_MAX = 1000;
export const QR_MARGIN_MAX = 10;
export const QR_IMAGE_PATH = '/api/v1/qr/image';

export interface QrOptions {
  data: string;
  size: number;
  color: string;
  bgcolor: string;
  format: (typeof QR_FORMATS)[number];
  ecc: Ecc;
  margin: number;
}

export const QR_DEFAULTS = {
  size: 300,
  color: '000000',
  bgcolor: 'ffffff',
  format: 'png',
  ecc: 'M',
  margin: 4,
} as const;

/** Builds the symbol, refusing with a 400 what could not be rendered or read. */
export function planQr(options: QrOptions): QrSymbol {
  if (options.color === options.bgcolor) {
    throw new ApiError('bad_request', 'color and bgcolor must differ, or the code cannot be read', {
      param: 'bgcolor',
    });
  }
  const bytes = new TextEncoder().encode(options.data).byteLength;
  const max = QR_MAX_BYTES[options.ecc];
  let symbol: QrSymbol;
  try {
    if (bytes > max) throw new QrDataTooLong(bytes, max);
    symbol = buildQr(options.data, options.ecc);
  } catch (err) {
    if (!(err instanceof QrDataTooLong)) throw err;
    throw new ApiError(
      'bad_request',
      `data is ${err.bytes} bytes of UTF-8; at ecc=${options.ecc} a QR code holds at most ${err.max} bytes` +
        (options.ecc === 'L' ? '' : ' (a lower ecc holds more)'),
      { param: 'data', details: { bytes: err.bytes, max: err.max } },
    );
  }
  const min = minimumSize(symbol, options.margin);
  if (options.size < min) {
    throw new ApiError(
      'bad_request',
      `size must be at least ${min} for this data: the code is ${min} modules wide with margin ${options.margin}, ` +
        'and each module needs a pixel',
      { param: 'size', details: { min } },
    );
  }
  return symbol;
}

/** The parameters exactly as they are written into, and read back from, the signed URL. */
export function signedValues(options: QrOptions): SignedValues {
  return {
    format: options.format,
    size: String(options.size),
    color: options.color,
    bgcolor: options.bgcolor,
    ecc: options.ecc,
    margin: String(options.margin),
    data: options.data,
  };
}

/**
 * The one spelling of a signed image URL's query: the signed parameters in signing order, then `sig`,
 * each value percent-encoded by encodeURIComponent. The image endpoint serves only this spelling.
 */
export function canonicalQuery(values: SignedValues, sig: string): string {
  return Object.entries({ ...values, sig })
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
}

export function imageUrl(origin: string, values: SignedValues, sig: string): string {
  return `${origin}${QR_IMAGE_PATH}?${canonicalQuery(values, sig)}`;
}

/** Renders done by this isolate; the tests read it to prove that spellings, HEAD and concurrency add none. */
export const qrRenderStats = { renders: 0 };

export interface RenderedQr {
  body: Uint8Array | string;
  contentType: string;
}

export async function renderQr(symbol: QrSymbol, options: QrOptions): Promise<RenderedQr> {
  qrRenderStats.renders++;
  const style = { size: options.size, margin: options.margin, color: options.color, bgcolor: options.bgcolor };
  return options.format === 'svg'
    ? { body: renderSvg(symbol, style), contentType: 'image/svg+xml; charset=utf-8' }
    : { body: await renderPng(symbol, style), contentType: 'image/png' };
}
