// The transformation options as parameters (zod), for both doors: POST /compress's parts and an image
// URL's options. Each refusal says what is allowed; the doors name the field.
import { z } from '@hono/zod-openapi';
import { choiceParam } from '../../params.ts';
import { cssColour, hexColour, type Rgba } from './colour.ts';
import {
  AUTO_GRAVITY,
  FACE_GRAVITY,
  FIT_MODES,
  FLIPS,
  focalPoint,
  GRAVITY_NAMES,
  MAX_DPR,
  MIN_DPR,
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
