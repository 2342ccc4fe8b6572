// The transformation options as parameters (zod), for both doors: POST /compress's parts and an image
// URL's options. Each refusal says what is allowed; the doors name the field.
import { z } from '@hono/zod-openapi';
import { choiceParam, integerParam } from '../../params.ts';
import { cssColour, hexColour, type Rgba } from './colour.ts';
import {
  AUTO_GRAVITY,
  FACE_GRAVITY,
  FIT_MODES,
  FLIPS,
  focalPoint,
  GRAVITY_NAMES,
  MAX_BLUR,
  MAX_DPR,
  MAX_SHARPEN,
  MAX_TRIM_SIDE,
  MIN_BLUR,
  MIN_DPR,
  MIN_SHARPEN,
  TRIM_BORDER,
  type Trim,
  type Gravity,
  type GravityName,
  type Rotation,
} from './options.ts';

export const fitParam = () => choiceParam(FIT_MODES);

export const flipParam = () => choiceParam(FLIPS);

export const rotateParam = () => choiceParam(['90', '180', '270']).transform((v) => Number(v) as Rotation);

const GRAVITY_MESSAGE = `must be one of ${GRAVITY_NAMES.join(', ')}, ${AUTO_GRAVITY}, ${FACE_GRAVITY}, or a focal point XxY with X and Y from 0 to 1 (e.g. 0.5x0.25)`;

export const gravityParam = () =>
  z.string().transform((v, ctx): Gravity => {
    const lower = v.toLowerCase();
    if (lower === AUTO_GRAVITY) return AUTO_GRAVITY;
    if (lower === FACE_GRAVITY) return FACE_GRAVITY;
    const named = GRAVITY_NAMES.find((g) => g === lower);
    const point = named ? null : focalPoint(lower);
    if (named) return named as GravityName;
    if (point) return point;
    ctx.addIssue({ code: 'custom', message: GRAVITY_MESSAGE });
    return z.NEVER;
  });

const DPR_MESSAGE = `must be a number from ${MIN_DPR} to ${MAX_DPR}, with at most two decimals (e.g. 2 or 1.5)`;

export const dprParam = () =>
  z
    .string()
    .regex(/^\d(\.\d{1,2})?$/, { error: DPR_MESSAGE })
    .transform(Number)
    .pipe(z.number().min(MIN_DPR, { error: DPR_MESSAGE }).max(MAX_DPR, { error: DPR_MESSAGE }));

/** A CSS colour (POST /compress): hex with `#`, rgb()/rgba(), a name. */
export const cssColourParam = () =>
  z.string().transform((v, ctx): Rgba => {
    const colour = cssColour(v);
    if (colour) return colour;
    ctx.addIssue({
      code: 'custom',
      message:
        'must be a CSS colour: #rgb, #rrggbb (or with alpha, #rrggbbaa), rgb(…)/rgba(…), or a name such as white',
    });
    return z.NEVER;
  });

/** Hex without `#` (image URLs, where `#` and commas cannot stand): rgb, rgba, rrggbb or rrggbbaa. */
export const hexColourParam = () =>
  z.string().transform((v, ctx): Rgba => {
    const colour = hexColour(v);
    if (colour) return colour;
    ctx.addIssue({ code: 'custom', message: 'must be a hex colour without #: rgb, rrggbb or rrggbbaa (e.g. ff0000)' });
    return z.NEVER;
  });

export const blurParam = () => integerParam(MIN_BLUR, MAX_BLUR);

const SHARPEN_MESSAGE = `must be a number from ${MIN_SHARPEN} to ${MAX_SHARPEN}, with at most two decimals (e.g. 3 or 1.5)`;

export const sharpenParam = () =>
  z
    .string()
    .regex(/^\d{1,2}(\.\d{1,2})?$/, { error: SHARPEN_MESSAGE })
    .transform(Number)
    .pipe(z.number().min(MIN_SHARPEN, { error: SHARPEN_MESSAGE }).max(MAX_SHARPEN, { error: SHARPEN_MESSAGE }));

const TRIM_MESSAGE = `must be ${TRIM_BORDER} or four whole numbers of pixels top;right;bottom;left, each from 0 to ${MAX_TRIM_SIDE} (e.g. 10;0;10;0)`;

/** `border`, or `top;right;bottom;left` in upright source pixels (`;`: commas separate an image URL's options). */
export const trimParam = () =>
  z.string().transform((v, ctx): Trim => {
    if (v.toLowerCase() === TRIM_BORDER) return TRIM_BORDER;
    const sides = v.split(';');
    if (sides.length === 4 && sides.every((n) => /^\d{1,9}$/.test(n) && Number(n) <= MAX_TRIM_SIDE)) {
      const [top, right, bottom, left] = sides.map(Number) as [number, number, number, number];
      return { top, right, bottom, left };
    }
    ctx.addIssue({ code: 'custom', message: TRIM_MESSAGE });
    return z.NEVER;
  });
