// A Display P3 ICC profile (version 4: D65 white, P3 primaries, the sRGB curve), for AVIF input whose nclx
// says P3 primaries with the sRGB transfer: its pixels pass through unchanged and the output carries this
// profile, so Display P3 stays P3 (browsers and image viewers read the profile). The colorants are Apple's
// Display P3 profile's (D50-adapted by Bradford), the curve ICC's parametric type 3 with sRGB's constants.

const encoder = new TextEncoder();

function s15Fixed16(values: number[]): number[] {
  return values.flatMap((v) => {
    const n = Math.round(v * 65536) >>> 0;
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  });
}

const u32 = (n: number): number[] => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const ascii = (s: string): number[] => [...encoder.encode(s)];

function mluc(text: string): number[] {
  const utf16 = [...text].flatMap((c) => [0, c.charCodeAt(0)]);
  return [
    ...ascii('mluc'),
    0,
    0,
    0,
    0,
    ...u32(1),
    ...u32(12),
    ...ascii('enUS'),
    ...u32(utf16.length),
    ...u32(28),
    ...utf16,
  ];
}

const xyz = (x: number, y: number, z: number): number[] => [...ascii('XYZ '), 0, 0, 0, 0, ...s15Fixed16([x, y, z])];

function build(): Uint8Array {
  const tags: [string, number[]][] = [
    ['desc', mluc('Display P3')],
    ['cprt', mluc('No copyright, use freely')],
    ['wtpt', xyz(0.964203, 1.0, 0.824905)],
    ['rXYZ', xyz(0.515121, 0.241196, -0.001053)],
    ['gXYZ', xyz(0.291977, 0.692245, 0.041885)],
    ['bXYZ', xyz(0.157104, 0.066574, 0.784073)],
    // sRGB's curve: Y = (aX + b)^g for X ≥ d, else cX.
    [
      'rTRC',
      [...ascii('para'), 0, 0, 0, 0, 0, 3, 0, 0, ...s15Fixed16([2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045])],
    ],
    [
      'chad',
      [
        ...ascii('sf32'),
        0,
        0,
        0,
        0,
        ...s15Fixed16([1.047882, 0.022919, -0.050217, 0.029587, 0.990479, -0.017059, -0.009232, 0.015076, 0.751678]),
      ],
    ],
  ];
  const shared = ['gTRC', 'bTRC'];
  const count = tags.length + shared.length;
  let offset = 128 + 4 + count * 12;
  const table: number[] = [...u32(count)];
  const data: number[] = [];
  const offsets = new Map<string, [number, number]>();
  for (const [sig, body] of tags) {
    while (body.length % 4) body.push(0);
    offsets.set(sig, [offset + data.length, body.length]);
    data.push(...body);
  }
  for (const [sig] of tags) table.push(...ascii(sig), ...u32(offsets.get(sig)![0]), ...u32(offsets.get(sig)![1]));
  for (const sig of shared) table.push(...ascii(sig), ...u32(offsets.get('rTRC')![0]), ...u32(offsets.get('rTRC')![1]));
  offset += data.length;
  const header = [
    ...u32(offset),
    0,
    0,
    0,
    0,
    4,
    0x40,
    0,
    0, // size, CMM, version 4.4
    ...ascii('mntr'),
    ...ascii('RGB '),
    ...ascii('XYZ '),
    0x07,
    0xe2,
    0,
    1,
    0,
    1,
    0,
    0,
    0,
    0,
    0,
    0, // 2018-01-01
    ...ascii('acsp'),
    ...ascii('APPL'),
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0, // platform, flags, manufacturer, model
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0, // attributes
    0,
    0,
    0,
    0, // rendering intent: perceptual
    ...s15Fixed16([0.964203, 1.0, 0.824905]), // the PCS illuminant, D50
    0,
    0,
    0,
    0, // creator
    ...new Array(16).fill(0), // profile ID (none)
    ...new Array(28).fill(0),
  ];
  if (header.length !== 128) throw new Error('the ICC header must be 128 bytes');
  return Uint8Array.from([...header, ...table, ...data]);
}

/** The profile's bytes (built once). */
export const DISPLAY_P3_PROFILE: Uint8Array = build();
