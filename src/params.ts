// Query-parameter schemas shared by the Tools API routes. Every rule says, in its message, what is allowed,
// and the validation hook names the parameter.
import { z } from '@hono/zod-openapi';

/** A whole number written in plain decimal digits (no sign, exponent, spaces or fraction) in [min, max]. */
export function integerParam(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d{1,9}$/, { error: message })
    .transform(Number)
    .pipe(z.number().int().min(min, { error: message }).max(max, { error: message }));
}

/**
 * A string from a fixed list, matched case-insensitively and returned in its canonical spelling. `aliases`
 * (lower case) are other spellings of a choice, which `hint` names in the refusal.
 */
export function choiceParam<const T extends readonly [string, ...string[]]>(
  choices: T,
  other: { aliases: Readonly<Record<string, T[number]>>; hint: string } | undefined = undefined,
) {
  const message = `must be one of ${choices.join(', ')}${other ? ` (${other.hint})` : ''}`;
  return z.string().transform((v, ctx) => {
    const lower = v.toLowerCase();
    const found =
      (other && Object.hasOwn(other.aliases, lower) ? other.aliases[lower] : undefined) ??
      choices.find((c) => c.toLowerCase() === lower);
    if (found === undefined) {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return found as T[number];
  });
}

/**
 * An object of query parameters that refuses parameters it does not know, naming the first one and
 * listing the allowed ones (a misspelt `limt` must not be ignored silently).
 */
export function queryObject<S extends z.ZodRawShape>(shape: S) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `unknown parameter "${issue.keys[0]}"; allowed: ${allowed}` : undefined,
  });
}
