// Guessing the encoding of a page that declares none, from its bytes, among the legacy encodings
// TextDecoder knows. Valid UTF-8 is UTF-8; bytes in ISO-2022-JP's escapes are ISO-2022-JP; otherwise
// the words that hold non-ASCII bytes are decoded in every candidate encoding, each result is scored
// against the language models of charset-models.ts, and the best wins (ties go to the encoding listed
// first, the more common on the web). Encodings that give the very same text tie, and the first is
// reported: the text, which is what the caller wants, is the same.
import {
  COMMON_HANGUL,
  COMMON_IDEOGRAPHS,
  COMMON_SYMBOLS,
  LETTER_MODELS,
  TLD_LANGUAGES,
  languagesOf,
  type LetterModel,
} from './charset-models.ts';

/** How many bytes of non-ASCII words the detector scores: enough for any head, bounded CPU. */
export const DETECT_SAMPLE_BYTES = 4 * 1024;

/** Candidates in order of preference when they tie (roughly, how common each is on the web). */
export const DETECT_CANDIDATES = [
  'windows-1252',
  'windows-1251',
  'windows-1250',
  'shift_jis',
  'gb18030',
  'euc-kr',
  'big5',
  'euc-jp',
  'windows-1256',
  'windows-1254',
  'windows-1253',
  'windows-1255',
  'windows-1257',
  'windows-874',
  'windows-1258',
  'koi8-r',
  'koi8-u',
  'iso-8859-2',
  'iso-8859-15',
  'iso-8859-5',
  'iso-8859-7',
  'iso-8859-6',
  'iso-8859-8',
  'iso-8859-4',
  'iso-8859-13',
  'iso-8859-3',
  'iso-8859-10',
  'iso-8859-14',
  'iso-8859-16',
] as const;

export interface Detected {
  encoding: string;
  /** `default` when the bytes say nothing (all ASCII), `detected` when they chose the encoding. */
  source: 'detected' | 'default';
}

/** What the page says of its language, which tips the balance between scripts' look-alikes. */
export interface LanguageHints {
  /** `<html lang>` or the `Content-Language` header, as given. */
  lang?: string | null;
  /** The page's host, whose top-level domain browsers use the same way. */
  host?: string | null;
}

/** A language model the page's hints name scores this much more. */
const HINTED_FACTOR = 1.25;

/** The primary language subtags the hints name. */
export function hintedLanguages(hints: LanguageHints): Set<string> {
  const out = new Set<string>();
  for (const tag of (hints.lang ?? '').split(',')) {
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
    if (primary) out.add(primary);
  }
  const tld = hints.host?.toLowerCase().split('.').pop();
  if (tld && TLD_LANGUAGES[tld]) out.add(TLD_LANGUAGES[tld]);
  return out;
}

export function detectEncoding(bytes: Uint8Array, hints: LanguageHints = {}): Detected {
  const { sample, highBytes, escapes } = nonAsciiWords(bytes);
  if (highBytes === 0) {
    return escapes && decodes(bytes, 'iso-2022-jp') !== null
      ? { encoding: 'iso-2022-jp', source: 'detected' }
      : { encoding: 'utf-8', source: 'default' };
  }
  if (decodes(sample, 'utf-8') !== null) return { encoding: 'utf-8', source: 'detected' };
  const hinted = hintedLanguages(hints);
  let best: { encoding: string; score: number } = { encoding: 'windows-1252', score: -Infinity };
  for (const encoding of DETECT_CANDIDATES) {
    const text = decodes(sample, encoding);
    if (text === null) continue;
    const score = scoreText(text, hinted);
    if (score > best.score) best = { encoding, score };
  }
  return { encoding: best.encoding, source: 'detected' };
}

/** The text of `bytes` in `encoding`, or null when they are not valid in it. */
function decodes(bytes: Uint8Array, encoding: string): string | null {
  try {
    // stream: a character cut at the sample's end is not an error.
    return new TextDecoder(encoding, { fatal: true, ignoreBOM: false }).decode(bytes, { stream: true });
  } catch {
    return null;
  }
}

const isSeparator = (b: number) => b <= 0x20 || b === 0x3c || b === 0x3e || b === 0x22 || b === 0x27 || b === 0x3d;

/**
 * The words (runs between spaces, quotes, `<`, `>` and `=`) that contain a byte ≥ 0x80, joined by
 * spaces. No multi-byte encoding uses those separators as a trailing byte, so no character is cut.
 */
function nonAsciiWords(bytes: Uint8Array): { sample: Uint8Array; highBytes: number; escapes: boolean } {
  const sample = new Uint8Array(Math.min(bytes.length + 1, DETECT_SAMPLE_BYTES));
  let length = 0;
  let highBytes = 0;
  let escapes = false;
  let start = 0;
  let high = false;
  for (let i = 0; i <= bytes.length && length < sample.length; i++) {
    const b = i < bytes.length ? bytes[i]! : 0x20;
    if (b === 0x1b) escapes = true;
    if (!isSeparator(b)) {
      if (b >= 0x80) {
        high = true;
        highBytes++;
      }
      continue;
    }
    if (high) {
      // A word that does not fit ends the sample, unless it is the first (then cut, and decoded as such).
      const room = sample.length - length - 1;
      if (i - start > room && length > 0) break;
      const word = bytes.subarray(start, start + Math.min(i - start, room));
      sample.set(word, length);
      length += word.length;
      sample[length++] = 0x20;
    }
    start = i + 1;
    high = false;
  }
  return { sample: sample.subarray(0, length), highBytes, escapes };
}

interface Model {
  languages: string[];
  letters: Map<string, number>;
  /** Points for a letter of the model: CJK characters stand for two bytes, so they count more. */
  weight: (c: string) => number;
}

/** Points per letter: 1, or 1.5 / 1 / 0.5 by thirds of a list in order of frequency. */
function lettersOf(model: LetterModel): Map<string, number> {
  const letters = new Map<string, number>();
  const list = [...model.letters];
  list.forEach((c, i) => {
    const points = model.byFrequency ? [1.5, 1, 0.5][Math.floor((3 * i) / list.length)]! : 1;
    letters.set(c, points);
    const upper = c.toUpperCase();
    if (upper.length === 1) letters.set(upper, points);
  });
  return letters;
}
const SYMBOLS = new Set(COMMON_SYMBOLS);
const COMMON = new Set(COMMON_IDEOGRAPHS);
const HANGUL_COMMON = new Set(COMMON_HANGUL);
const KANA = /[\u3041-\u30ff]/u;
const HANGUL = /[\uac00-\ud7a3]/u;
const IDEOGRAPH = /\p{Script=Han}/u;
/** CJK characters stand for two bytes (or three), so they count more than a letter of an alphabet. */
const cjk = (languages: string[], own: (c: string) => number): Model => ({
  languages,
  letters: new Map(),
  weight: (c) => own(c) || (COMMON.has(c) ? 3 : IDEOGRAPH.test(c) ? 0.5 : 0),
});
const MODELS: Model[] = [
  ...LETTER_MODELS.map((m): Model => ({ languages: languagesOf(m.name), letters: lettersOf(m), weight: () => 0 })),
  cjk(['ja'], (c) => (KANA.test(c) ? 3 : 0)),
  cjk(['ko'], (c) => (HANGUL_COMMON.has(c) ? 3 : HANGUL.test(c) ? 1 : 0)),
  cjk(['zh'], () => 0),
];

const SCRIPTS: [string, RegExp][] = [
  ['latin', /\p{Script=Latin}/u],
  ['cyrillic', /\p{Script=Cyrillic}/u],
  ['greek', /\p{Script=Greek}/u],
  ['hebrew', /\p{Script=Hebrew}/u],
  ['arabic', /\p{Script=Arabic}/u],
  ['thai', /\p{Script=Thai}/u],
  ['cjk', /\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}|\p{Script=Hangul}|\u30fc/u],
];

interface CharInfo {
  /** `bad`: C1 controls, private use, half-width katakana and box drawing, which text never holds. */
  kind: 'letter' | 'mark' | 'symbol' | 'bad' | 'other';
  script: string;
  upper: boolean;
  lower: boolean;
  /** A symbol of COMMON_SYMBOLS, fine between words. */
  common: boolean;
}

/** What each character is, worked out once: there are only as many as the decoders can produce. */
const INFO = new Map<string, CharInfo>();

function infoOf(c: string): CharInfo {
  let info = INFO.get(c);
  if (info) return info;
  const code = c.codePointAt(0)!;
  const letter = /\p{L}/u.test(c);
  const bad =
    (code >= 0x80 && code < 0xa0) ||
    (code >= 0xe000 && code <= 0xf8ff) ||
    (code >= 0xff61 && code <= 0xff9f) ||
    (code >= 0x2500 && code <= 0x259f);
  info = {
    kind: bad ? 'bad' : letter ? 'letter' : /\p{M}/u.test(c) ? 'mark' : code >= 0x80 ? 'symbol' : 'other',
    script: letter ? (SCRIPTS.find(([, re]) => re.test(c))?.[0] ?? 'other') : '',
    upper: letter && c !== c.toLowerCase(),
    lower: letter && c !== c.toUpperCase(),
    common: SYMBOLS.has(c),
  };
  INFO.set(c, info);
  return info;
}

/** How much `text` reads like one language: points for its letters, less for anything out of place. */
export function scoreText(text: string, hinted: Set<string> = new Set()): number {
  const chars = [...text];
  const infos = chars.map(infoOf);
  const isLetter = (i: number) => infos[i]?.kind === 'letter';
  const counts = new Map<string, number>();
  let bad = 0;
  let caseFlips = 0;
  let prevScript = '';
  for (let i = 0; i < chars.length; i++) {
    const info = infos[i]!;
    switch (info.kind) {
      case 'letter': {
        // A word that changes script mid-way (Latin to Cyrillic, Hebrew to Latin) is a wrong decoding;
        // CJK text runs into Latin without spaces (LINEで送る), so that mix is fine.
        const mixed = prevScript !== '' && info.script !== prevScript && info.script !== 'cjk' && prevScript !== 'cjk';
        prevScript = info.script;
        if (mixed) bad++;
        if (chars[i]!.charCodeAt(0) < 0x80) break;
        if (info.upper && infos[i - 1]?.lower) caseFlips++;
        if (!mixed) counts.set(chars[i]!, (counts.get(chars[i]!) ?? 0) + 1);
        break;
      }
      case 'mark': {
        // A combining mark belongs after a letter (or one more mark): anywhere else it was a letter once.
        const before = infos[i - 1]?.kind;
        if (before === 'letter' || (before === 'mark' && isLetter(i - 2)))
          counts.set(chars[i]!, (counts.get(chars[i]!) ?? 0) + 1);
        else bad++;
        break;
      }
      case 'symbol':
        // Symbols are fine between words, not inside one: a mis-decoded letter often lands on ¦, ¤ or ¹.
        if (!info.common || (isLetter(i - 1) && isLetter(i + 1))) bad++;
        prevScript = '';
        break;
      case 'bad':
        bad++;
        prevScript = '';
        break;
      default:
        prevScript = '';
    }
  }
  let best = -Infinity;
  for (const model of MODELS) {
    let score = 0;
    for (const [c, n] of counts) {
      const w = model.letters.get(c) ?? model.weight(c);
      score += (w > 0 ? w : -1) * n;
    }
    if (score > 0 && model.languages.some((l) => hinted.has(l))) score *= HINTED_FACTOR;
    if (score > best) best = score;
  }
  return best - 3 * bad - caseFlips;
}
