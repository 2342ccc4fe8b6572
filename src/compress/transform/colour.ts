// `background` colours: CSS colours on /compress (hex, rgb()/rgba(), the named colours, `transparent`),
// hex without `#` in image URLs, where `#` and commas cannot stand.

/** Red, green, blue, alpha: 0–255 each. */
export type Rgba = [number, number, number, number];

/** The CSS named colours (CSS Color Module Level 4), as rrggbb. */
const NAMED_LIST =
  'aliceblue f0f8ff antiquewhite faebd7 aqua 00ffff aquamarine 7fffd4 azure f0ffff beige f5f5dc bisque ffe4c4 ' +
  'black 000000 blanchedalmond ffebcd blue 0000ff blueviolet 8a2be2 brown a52a2a burlywood deb887 ' +
  'cadetblue 5f9ea0 chartreuse 7fff00 chocolate d2691e coral ff7f50 cornflowerblue 6495ed cornsilk fff8dc ' +
  'crimson dc143c cyan 00ffff darkblue 00008b darkcyan 008b8b darkgoldenrod b8860b darkgray a9a9a9 ' +
  'darkgreen 006400 darkgrey a9a9a9 darkkhaki bdb76b darkmagenta 8b008b darkolivegreen 556b2f ' +
  'darkorange ff8c00 darkorchid 9932cc darkred 8b0000 darksalmon e9967a darkseagreen 8fbc8f ' +
  'darkslateblue 483d8b darkslategray 2f4f4f darkslategrey 2f4f4f darkturquoise 00ced1 darkviolet 9400d3 ' +
  'deeppink ff1493 deepskyblue 00bfff dimgray 696969 dimgrey 696969 dodgerblue 1e90ff firebrick b22222 ' +
  'floralwhite fffaf0 forestgreen 228b22 fuchsia ff00ff gainsboro dcdcdc ghostwhite f8f8ff gold ffd700 ' +
  'goldenrod daa520 gray 808080 green 008000 greenyellow adff2f grey 808080 honeydew f0fff0 hotpink ff69b4 ' +
  'indianred cd5c5c indigo 4b0082 ivory fffff0 khaki f0e68c lavender e6e6fa lavenderblush fff0f5 ' +
  'lawngreen 7cfc00 lemonchiffon fffacd lightblue add8e6 lightcoral f08080 lightcyan e0ffff ' +
  'lightgoldenrodyellow fafad2 lightgray d3d3d3 lightgreen 90ee90 lightgrey d3d3d3 lightpink ffb6c1 ' +
  'lightsalmon ffa07a lightseagreen 20b2aa lightskyblue 87cefa lightslategray 778899 lightslategrey 778899 ' +
  'lightsteelblue b0c4de lightyellow ffffe0 lime 00ff00 limegreen 32cd32 linen faf0e6 magenta ff00ff ' +
  'maroon 800000 mediumaquamarine 66cdaa mediumblue 0000cd mediumorchid ba55d3 mediumpurple 9370db ' +
  'mediumseagreen 3cb371 mediumslateblue 7b68ee mediumspringgreen 00fa9a mediumturquoise 48d1cc ' +
  'mediumvioletred c71585 midnightblue 191970 mintcream f5fffa mistyrose ffe4e1 moccasin ffe4b5 ' +
  'navajowhite ffdead navy 000080 oldlace fdf5e6 olive 808000 olivedrab 6b8e23 orange ffa500 orangered ff4500 ' +
  'orchid da70d6 palegoldenrod eee8aa palegreen 98fb98 paleturquoise afeeee palevioletred db7093 ' +
  'papayawhip ffefd5 peachpuff ffdab9 peru cd853f pink ffc0cb plum dda0dd powderblue b0e0e6 purple 800080 ' +
  'rebeccapurple 663399 red ff0000 rosybrown bc8f8f royalblue 4169e1 saddlebrown 8b4513 salmon fa8072 ' +
  'sandybrown f4a460 seagreen 2e8b57 seashell fff5ee sienna a0522d silver c0c0c0 skyblue 87ceeb ' +
  'slateblue 6a5acd slategray 708090 slategrey 708090 snow fffafa springgreen 00ff7f steelblue 4682b4 ' +
  'tan d2b48c teal 008080 thistle d8bfd8 tomato ff6347 turquoise 40e0d0 violet ee82ee wheat f5deb3 ' +
  'white ffffff whitesmoke f5f5f5 yellow ffff00 yellowgreen 9acd32';
const NAMED: Record<string, string> = {};
for (let i = 0, words = NAMED_LIST.split(' '); i < words.length; i += 2) NAMED[words[i]!] = words[i + 1]!;

/** Hex digits alone: 3, 4, 6 or 8 of them (rgb, rgba, rrggbb, rrggbbaa); null when they are not. */
export function hexColour(hex: string): Rgba | null {
  if (!/^[0-9a-f]+$/i.test(hex) || ![3, 4, 6, 8].includes(hex.length)) return null;
  const digits = hex.length <= 4 ? [...hex].map((d) => d + d).join('') : hex;
  const byte = (i: number) => Number.parseInt(digits.slice(i * 2, i * 2 + 2), 16);
  return [byte(0), byte(1), byte(2), digits.length === 8 ? byte(3) : 255];
}

/** A channel of rgb(): 0–255, or a percentage. */
function channel(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text);
  if (!match) return null;
  const value = match[2] ? (Number(match[1]) * 255) / 100 : Number(match[1]);
  return value <= 255 ? Math.round(value) : null;
}

/** An alpha: 0–1, or a percentage. */
function alpha(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text);
  if (!match) return null;
  const value = match[2] ? Number(match[1]) / 100 : Number(match[1]);
  return value <= 1 ? Math.round(value * 255) : null;
}

/** A CSS colour: `#rgb`, `#rrggbb` (and with alpha), `rgb(…)`/`rgba(…)` with commas or spaces, a name; null otherwise. */
export function cssColour(value: string): Rgba | null {
  const text = value.trim().toLowerCase();
  if (text.startsWith('#')) return hexColour(text.slice(1));
  if (text === 'transparent') return [0, 0, 0, 0];
  const named = NAMED[text];
  if (named) return hexColour(named);
  const fn = /^rgba?\(\s*([^)]*?)\s*\)$/.exec(text);
  if (!fn) return null;
  const [colours, slashAlpha] = fn[1]!.split('/').map((s) => s.trim());
  const parts = colours!.includes(',') ? colours!.split(',').map((s) => s.trim()) : colours!.split(/\s+/);
  if (slashAlpha !== undefined && parts.length !== 3) return null;
  if (parts.length !== 3 && parts.length !== 4) return null;
  const [r, g, b] = parts.slice(0, 3).map(channel);
  const a = slashAlpha ?? parts[3];
  const alphaValue = a === undefined ? 255 : alpha(a);
  if (r == null || g == null || b == null || alphaValue === null) return null;
  return [r, g, b, alphaValue];
}

/** The colour as rrggbb, with aa when it is not opaque (cache keys, answers). */
export const colourHex = (c: Rgba): string =>
  c
    .slice(0, c[3] === 255 ? 3 : 4)
    .map((v) => v.toString(16).padStart(2, '0'))
    .join('');
