// Which output formats a key's tier may ask for: one check and one refusal for POST /compress and the
// signed image URLs alike.
import { canWrite } from '../accounts/entitlements.ts';
import type { ImageTier } from '../accounts/tiers.ts';
import { ApiError } from '../errors.ts';
import { FORMAT_NAMES, FORMATS, type ImageFormat } from './formats.ts';

/** Refuses (403 plan_upgrade_required) a format the tier does not write; `hint` ends the message. */
export function requireFormat(tier: ImageTier, format: ImageFormat, param: string, hint = ''): void {
  if (canWrite({ image: tier }, format)) return;
  const free = FORMATS.filter((f) => canWrite({ image: 'free' }, f))
    .map((f) => FORMAT_NAMES[f])
    .join(' and ');
  throw new ApiError(
    'plan_upgrade_required',
    `${FORMAT_NAMES[format]} output needs the pro tier; the free tier writes ${free}${hint}`,
    { param },
  );
}
