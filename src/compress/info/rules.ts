// The one rule of an info request: it encodes nothing, so nothing that shapes an output may come with it
// (whichever door: POST /compress names them width, target_kb, fit…; an image URL w, kb, r…). `quality` has a
// default and is ignored; `metadata` decides whether GPS is answered.

const SHAPING_FIELDS = [
  'width',
  'height',
  'target_kb',
  'palette',
  'colors',
  'lossless',
  'fit',
  'gravity',
  'rotate',
  'flip',
  'background',
  'dpr',
  'trim',
  'blur',
  'sharpen',
] as const;
export type ShapingField = (typeof SHAPING_FIELDS)[number];

export interface InfoRuleBroken {
  field: ShapingField;
  message: string;
}

/** The first output parameter given beside format=json (`names`: a door's own spelling), or null. */
export function brokenInfoRule(
  given: Partial<Record<ShapingField, unknown>>,
  names: { format: string } & Partial<Record<ShapingField, string>> = { format: 'format=json' },
): InfoRuleBroken | null {
  for (const field of SHAPING_FIELDS) {
    if (given[field] === undefined || given[field] === false) continue;
    return {
      field,
      message: `${names.format} describes the image as it is and encodes nothing: leave out ${names[field] ?? field}`,
    };
  }
  return null;
}
