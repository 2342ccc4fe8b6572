import QRCode from 'qrcode-svg';
import { describe, expect, it } from 'vitest';
import { QR_MAX_BYTES, QrDataTooLong, buildQr, type Ecc, type QrSymbol } from '../../src/qr/encode.ts';
import { minimumSize, rasterGeometry, rasterise, renderPng, renderSvg, type QrStyle } from '../../src/qr/render.ts';
import {
  decodePngQr,
  decodeQrPixels,
  decodeSvgQr,
  hex,
  pixelAt,
  rasteriseSvg,
  readPng,
  type Pixels,
} from './qr-decode.ts';

const ECCS: Ecc[] = ['L', 'M', 'Q', 'H'];
const utf8 = (text: string) => new TextEncoder().encode(text);
const style = (overrides: Partial<QrStyle> = {}): QrStyle => ({
  size: 300,
  margin: 4,
  color: '000000',
  bgcolor: 'ffffff',
  ...overrides,
});

const URL_300 =
  'https://shop.example.com/catalogue/outdoor/tents/ultralight-2-person?colour=forest-green&size=regular' +
  '&utm_source=newsletter&utm_medium=email&utm_campaign=spring-sale-2026&ref=qr-code-print-flyer' +
  '&session=8f14e45fceea167a5a36dedd4bea2543&redirect=%2Fcheckout%2Fcart%3Fstep%3D2&lang=en-GB&theme=dark';

const TEXTS: Record<string, string> = {
  ascii: 'Hello, QR!',
  url: URL_300,
  // Accents, CJK, astral emoji, and the UTF-8 length boundaries qrcode-svg gets wrong.
  unicode: 'Crème brûlée — 日本語 🎉 \u007f\u0080\u07ff\u0800\ufffd\uffff\u{10000}\u{10ffff}',
};

describe('QR round trip: what a real decoder reads is exactly the UTF-8 of the input', () => {
  it('the long URL really is long', () => {
    expect(URL_300.length).toBeGreaterThanOrEqual(290);
  });

  for (const [name, text] of Object.entries(TEXTS)) {
    it.each(ECCS)(`${name} as PNG and SVG at ecc %s`, async (ecc) => {
      const symbol = buildQr(text, ecc);
      const png = await renderPng(symbol, style());
      const image = await readPng(png);
      expect([image.width, image.height]).toEqual([300, 300]);
      const fromPng = decodeQrPixels(image.data, image.width, image.height);
      expect(fromPng?.bytes).toEqual(utf8(text));
      expect(fromPng?.text).toBe(text);
      expect(fromPng?.version).toBe(symbol.version);

      const fromSvg = decodeSvgQr(renderSvg(symbol, style()));
      expect(fromSvg?.bytes).toEqual(utf8(text));
      expect(fromSvg?.text).toBe(text);
    });
  }

  it('picks the smallest version that fits', () => {
    expect(buildQr('Hello, QR!', 'M')).toMatchObject({ version: 1, modules: 21 });
    // Version 1-M holds 14 bytes: 'é' × 7 fits, one more byte does not.
    expect(buildQr('é'.repeat(7), 'M').version).toBe(1);
    expect(buildQr('é'.repeat(7) + 'a', 'M').version).toBe(2);
  });

  it('a lone surrogate does not throw and is carried as U+FFFD', async () => {
    for (const text of ['a\ud800b', '\udc00', 'x\ud83d']) {
      const expected = text.replace(/[\ud800-\udfff]/g, '\ufffd');
      const decoded = await decodePngQr(await renderPng(buildQr(text, 'M'), style({ size: 100 })));
      expect(decoded?.bytes).toEqual(utf8(expected));
      expect(decoded?.text).toBe(expected);
    }
  });

  it('empty data does not crash (the caller refuses it)', () => {
    const symbol = buildQr('', 'M');
    expect(symbol.version).toBe(1);
    expect(rasterise(symbol, style({ size: 50 }))).toHaveLength(50 * 50 * 4);
  });
});

describe('geometry and colour', () => {
  const symbol = buildQr('https://example.com/', 'M');
  const colours = style({ size: 290, color: '1a237e', bgcolor: 'fff8e1' });
  /** Centre pixel of module (row, col), counted inside the quiet zone. */
  type Centre = (s: QrStyle, row: number, col: number) => [number, number];
  /** PNG: whole-pixel modules (rasterGeometry). */
  const rasterCentre: Centre = (s, row, col) => {
    const { modulePx, offset } = rasterGeometry(symbol, s);
    return [offset + Math.floor((col + 0.5) * modulePx), offset + Math.floor((row + 0.5) * modulePx)];
  };
  /** SVG: vector modules of size / total each. */
  const vectorCentre: Centre = (s, row, col) => {
    const total = symbol.modules + 2 * s.margin;
    return [
      Math.floor(((s.margin + col + 0.5) * s.size) / total),
      Math.floor(((s.margin + row + 0.5) * s.size) / total),
    ];
  };
  const expectColours = (image: Pixels, s: QrStyle, centre: Centre) => {
    const dark = hex(s.color);
    const light = hex(s.bgcolor);
    expect(pixelAt(image, ...centre(s, 0, 0))).toEqual(dark); // finder outer ring
    expect(pixelAt(image, ...centre(s, 1, 1))).toEqual(light); // finder inner ring
    expect(pixelAt(image, ...centre(s, 3, 3))).toEqual(dark); // finder core
    expect(pixelAt(image, ...centre(s, 0, symbol.modules - 1))).toEqual(dark); // top-right finder
    expect(pixelAt(image, ...centre(s, 7, 7))).toEqual(light); // separator
    expect(pixelAt(image, 0, 0)).toEqual(light); // quiet zone
    expect(pixelAt(image, s.size - 1, s.size - 1)).toEqual(light);
  };

  it('PNG: dark modules have color, light ones and the quiet zone bgcolor, and nothing else', async () => {
    const image = await readPng(await renderPng(symbol, colours));
    expectColours(image, colours, rasterCentre);
    const seen = new Set<string>();
    for (let i = 0; i < image.data.length; i += 4) seen.add(image.data.subarray(i, i + 4).join());
    expect([...seen].sort()).toEqual([hex(colours.color).join(), hex(colours.bgcolor).join()].sort());
    expect(decodeQrPixels(image.data, image.width, image.height)?.text).toBe('https://example.com/');
  });

  it('SVG: same colours, exact size, a viewBox, no XML declaration, one path', () => {
    const svg = renderSvg(symbol, colours);
    expect(
      svg.startsWith(
        '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="290" height="290" viewBox="0 0 290 290">',
      ),
    ).toBe(true);
    expect(svg.match(/<path /g)).toHaveLength(1);
    const image = rasteriseSvg(svg);
    expect(image).toMatchObject({ svgWidth: 290, svgHeight: 290, viewBox: '0 0 290 290', width: 290, height: 290 });
    expectColours(image, colours, vectorCentre);
    expect(decodeQrPixels(image.data, image.width, image.height)?.text).toBe('https://example.com/');
  });

  it('modules are whole pixels, centred, the leftover pixels widening the quiet zone', () => {
    const s = style({ size: 97, margin: 2 });
    // 25 modules + 2 × 2 quiet modules = 29 → 3 px each; 97 − 75 = 22 px of quiet zone, 11 on each side.
    expect(symbol.modules).toBe(25);
    expect(rasterGeometry(symbol, s)).toEqual({ modulePx: 3, offset: 11 });
    const pixels = { data: rasterise(symbol, s), width: 97, height: 97 };
    for (let y = 0; y < 97; y++) {
      for (let x = 0; x < 97; x++) {
        const row = y < 11 ? -1 : Math.floor((y - 11) / 3);
        const col = x < 11 ? -1 : Math.floor((x - 11) / 3);
        const inside = row >= 0 && col >= 0 && row < symbol.modules && col < symbol.modules;
        expect(pixelAt(pixels, x, y)).toEqual(hex(inside && symbol.isDark(row, col) ? '000000' : 'ffffff'));
      }
    }
  });

  it('SVG and raster agree pixel for pixel when modules are whole pixels (so the SVG is not transposed)', () => {
    const asymmetric = buildQr('orientation check', 'H');
    const s = style({ size: (asymmetric.modules + 8) * 5 });
    expect(rasteriseSvg(renderSvg(asymmetric, s)).data).toEqual(rasterise(asymmetric, s));
  });

  it.each([0, 10])('margin %i decodes from PNG and SVG', async (margin) => {
    const s = style({ margin });
    const decoded = await decodePngQr(await renderPng(symbol, s));
    expect(decoded?.text).toBe('https://example.com/');
    expect(decodeSvgQr(renderSvg(symbol, s))?.text).toBe('https://example.com/');
    const image = { data: rasterise(symbol, s), width: 300, height: 300 };
    // With no quiet zone the finder's corner is the image's corner.
    expect(pixelAt(image, 0, 0)).toEqual(hex(margin === 0 ? '000000' : 'ffffff'));
  });
  it('decodes at sizes between whole pixels per module, where uneven module widths used to fail', async () => {
    const dense = buildQr(URL_300, 'Q');
    const total = dense.modules + 8;
    for (const ratio of [1.5, 2.5, 3.5, 4.5]) {
      const s = style({ size: Math.round(total * ratio), margin: 4 });
      expect((await decodePngQr(await renderPng(dense, s)))?.text, `ratio ${ratio}`).toBe(URL_300);
    }
  });
});

describe('minimumSize', () => {
  const cases: [string, QrSymbol][] = [
    ['version 1', buildQr('Hello, QR!', 'M')],
    ['version 18', buildQr(URL_300, 'H')],
  ];

  it.each(cases)('is one pixel per module, quiet zone included (%s)', (_, symbol) => {
    expect(minimumSize(symbol, 4)).toBe(symbol.modules + 8);
    expect(minimumSize(symbol, 0)).toBe(symbol.modules);
  });

  it.each(cases)('renders exactly the module matrix at that size, and it decodes (%s)', async (_, symbol) => {
    const s = style({ size: minimumSize(symbol, 4) });
    const image = await readPng(await renderPng(symbol, s));
    expect(image.width).toBe(s.size);
    for (let row = 0; row < symbol.modules; row++) {
      for (let col = 0; col < symbol.modules; col++) {
        expect(pixelAt(image, col + 4, row + 4)[0]).toBe(symbol.isDark(row, col) ? 0 : 255);
      }
    }
    // jsQR cannot find a version-1 code in a 29-pixel image at all, quiet zone or not; padding it
    // out shows the pixels themselves are a valid code.
    const pad = symbol.version === 1 ? 16 : 0;
    expect(decodeQrPixels(image.data, image.width, image.height, pad)).not.toBeNull();
  });
});

describe('capacity', () => {
  it.each(ECCS)('exactly QR_MAX_BYTES fits at ecc %s and one byte more throws QrDataTooLong', (ecc) => {
    const max = QR_MAX_BYTES[ecc];
    expect(buildQr('a'.repeat(max), ecc).version).toBe(40);
    expect(buildQr('a'.repeat(max - 2) + 'é', ecc).version).toBe(40);
    const tooLong = (data: string) => {
      try {
        buildQr(data, ecc);
      } catch (error) {
        return error;
      }
      throw new Error('expected QrDataTooLong');
    };
    expect(tooLong('a'.repeat(max + 1))).toMatchObject({ name: 'QrDataTooLong', bytes: max + 1, max });
    expect(tooLong('a'.repeat(max + 1))).toBeInstanceOf(QrDataTooLong);
    // Counted in UTF-8 bytes, not characters.
    const euros = Math.floor(max / 3) + 1;
    expect(tooLong('€'.repeat(euros))).toMatchObject({ bytes: euros * 3, max });
  });

  it('a full version-40 symbol decodes to its exact bytes', async () => {
    const text = 'Zürich 東京 🎉 '.repeat(200).slice(0, 1000);
    const bytes = utf8(text);
    const symbol = buildQr(text, 'M');
    expect(symbol.version).toBeGreaterThan(30);
    // 3 pixels per module: jsQR is reliable at whole-pixel module widths.
    const s = style({ size: (symbol.modules + 8) * 3 });
    const decoded = await decodePngQr(await renderPng(symbol, s));
    expect(decoded?.bytes).toEqual(bytes);
  });
});

describe('upstream qrcode-svg (pinned: if these fail, it was fixed or changed — revisit encode.ts)', () => {
  const upstream = (content: string) =>
    new QRCode({
      content,
      ecl: 'M',
      width: 300,
      height: 300,
      padding: 4,
      join: true,
      swap: true,
      pretty: false,
      xmlDeclaration: false,
    }).svg();

  it('prepends a UTF-8 BOM to non-ASCII text', () => {
    expect(decodeSvgQr(upstream('é'))?.bytes).toEqual(Uint8Array.of(0xef, 0xbb, 0xbf, 0xc3, 0xa9));
  });

  it('encodes an emoji as CESU-8 surrogate halves', () => {
    const bytes = decodeSvgQr(upstream('🎉'))?.bytes;
    expect(bytes).not.toEqual(utf8('🎉'));
    expect(bytes?.subarray(3, 6)).toEqual(Uint8Array.of(0xed, 0xa0, 0xbc)); // U+D83C as if a code point
  });

  it('throws on a lone surrogate', () => {
    expect(() => upstream('a\ud800')).toThrow(URIError);
  });
});
