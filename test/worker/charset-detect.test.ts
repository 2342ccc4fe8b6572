// The encoding detector on its own (src/meta/charset-detect.ts), in workerd's TextDecoder: what it
// answers when the bytes say little, and how a page's language hints tip it.
import { describe, expect, it } from 'vitest';
import { detectEncoding, hintedLanguages } from '../../src/meta/charset-detect.ts';

const latin1 = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
// "Elektronikos internetinė parduotuvė" in windows-1257, where ė is 0xEB (ë in windows-1252).
const LITHUANIAN = latin1('<title>Elektronikos internetin\xeb parduotuv\xeb</title>');

describe('detectEncoding', () => {
  it('says default (UTF-8) when every byte is ASCII', () => {
    expect(detectEncoding(latin1('<title>Plain</title>'))).toEqual({ encoding: 'utf-8', source: 'default' });
  });

  it('takes valid UTF-8 as UTF-8', () => {
    expect(detectEncoding(new TextEncoder().encode('<title>Déjà vu ✓</title>'))).toEqual({
      encoding: 'utf-8',
      source: 'detected',
    });
  });

  it('recognises ISO-2022-JP by its escapes', () => {
    // ESC $ B, then 日本 in JIS X 0208, then ESC ( B.
    const bytes = Uint8Array.from([
      ...latin1('<title>'),
      0x1b,
      0x24,
      0x42,
      0x46,
      0x7c,
      0x4b,
      0x5c,
      0x1b,
      0x28,
      0x42,
      ...latin1('</title>'),
    ]);
    expect(detectEncoding(bytes)).toEqual({ encoding: 'iso-2022-jp', source: 'detected' });
  });

  it('lets the language or the country domain decide between look-alikes', () => {
    expect(detectEncoding(LITHUANIAN).encoding).toBe('windows-1252');
    expect(detectEncoding(LITHUANIAN, { lang: 'lt-LT' }).encoding).toBe('windows-1257');
    expect(detectEncoding(LITHUANIAN, { host: 'parduotuve.lt' }).encoding).toBe('windows-1257');
  });

  it('answers within its sample on a 2 MB page of noise', () => {
    const noise = new Uint8Array(2 * 1024 * 1024);
    for (let i = 0, x = 7; i < noise.length; i++) noise[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    expect(detectEncoding(noise).source).toBe('detected');
  });
});

describe('hintedLanguages', () => {
  it('reads primary subtags from lang and Content-Language lists, and the top-level domain', () => {
    expect([...hintedLanguages({ lang: 'pt-BR, en', host: 'loja.example.co.jp' })]).toEqual(['pt', 'en', 'ja']);
    expect([...hintedLanguages({ lang: null, host: 'example.com' })]).toEqual([]);
  });
});
