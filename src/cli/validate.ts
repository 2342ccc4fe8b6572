// Validation of everything an operator types, with zod. Each parser returns the clean value or throws
// a UsageError naming the flag and saying what is allowed.
import { z } from 'zod';
import {
  IMAGE_TIER_NAMES,
  SCOPES,
  TOOLS_TIER_NAMES,
  type ImageTier,
  type Scope,
  type ToolsTier,
} from '../accounts/tiers.ts';
import { UsageError } from './errors.ts';

const NO_CONTROL = /^[^\p{Cc}\p{Zl}\p{Zp}]*$/u;

const emailSchema = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .pipe(z.email('must be an email address like name@example.com'));

const nameSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(100, 'must be at most 100 characters')
  .regex(NO_CONTROL, 'must not contain control characters or line breaks');

const imageTierSchema = z.enum(IMAGE_TIER_NAMES, `must be one of ${IMAGE_TIER_NAMES.join(', ')}`);
const toolsTierSchema = z.enum(TOOLS_TIER_NAMES, `must be one of ${TOOLS_TIER_NAMES.join(', ')}`);

export const ACCOUNT_ID = /^acc_[0-9A-Za-z]{16}$/;
export const KEY_ID = /^key_[0-9A-Za-z]{16}$/;
const accountIdSchema = z.string().regex(ACCOUNT_ID, 'account ids look like acc_ followed by 16 letters or digits');
const keyIdSchema = z.string().regex(KEY_ID, 'key ids look like key_ followed by 16 letters or digits');

const scopesSchema = z.string().transform((text, ctx) => {
  const parts = text.split(',').map((p) => p.trim());
  const allowed = `a comma list of ${SCOPES.join(', ')}`;
  if (parts.some((p) => p === '')) {
    ctx.addIssue({ code: 'custom', message: `must be ${allowed}, without empty items` });
    return z.NEVER;
  }
  const unknown = parts.find((p) => !(SCOPES as readonly string[]).includes(p));
  if (unknown !== undefined) {
    ctx.addIssue({ code: 'custom', message: `unknown scope "${printable(unknown)}"; must be ${allowed}` });
    return z.NEVER;
  }
  if (new Set(parts).size !== parts.length) {
    ctx.addIssue({ code: 'custom', message: 'lists a scope more than once' });
    return z.NEVER;
  }
  if (parts.includes('manage') && parts.length > 1) {
    ctx.addIssue({
      code: 'custom',
      message: 'manage cannot be combined with image or tools: make a separate key for the management API',
    });
    return z.NEVER;
  }
  // Stored and shown in one canonical order.
  return SCOPES.filter((s) => parts.includes(s));
});

/** Shows a rejected value safely on one line. */
function printable(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(shown).slice(1, -1);
}

function check<T>(schema: z.ZodType<T, string>, value: string, label: string, usage: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const message = result.error.issues[0]?.message ?? 'is invalid';
  throw new UsageError(`invalid ${label}: ${message}`, usage);
}

export const parseEmail = (v: string, usage: string): string => check(emailSchema, v, '--email', usage);
export const parseName = (v: string, usage: string, flag = '--name'): string => check(nameSchema, v, flag, usage);
export const parseImageTier = (v: string, usage: string): ImageTier => check(imageTierSchema, v, '--image-tier', usage);
export const parseToolsTier = (v: string, usage: string): ToolsTier => check(toolsTierSchema, v, '--tools-tier', usage);
export const parseScopeList = (v: string, usage: string): Scope[] => check(scopesSchema, v, '--scopes', usage);
export const parseAccountId = (v: string, usage: string, label = 'account id'): string =>
  check(accountIdSchema, v, `${label} "${printable(v)}"`, usage);
export const parseKeyId = (v: string, usage: string): string =>
  check(keyIdSchema, v, `key id "${printable(v)}"`, usage);
