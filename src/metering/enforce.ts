// A meter's verdict as the error a refused request gets: the one spelling of "invalid key", "not enabled
// for this API", "rate limited" and "quota used up", for the Tools API, the image API and image URLs.
import { ApiError } from '../errors.ts';
import type { Verdict } from './types.ts';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="shrinkray"' };

export const unauthorized = (message: string): ApiError =>
  new ApiError('unauthorized', message, { headers: CHALLENGE });

/** Turns a refusal from the meter into the matching error; returns normally when the request may go on. */
export function enforce(verdict: Verdict): void {
  switch (verdict.outcome) {
    case 'ok':
      return;
    case 'unauthorized':
      throw unauthorized(`invalid API key: ${verdict.reason ?? 'unknown key'}`);
    case 'forbidden':
      throw new ApiError('forbidden', verdict.reason ?? 'this key is not enabled for this API');
    case 'rate_limit_exceeded':
      throw new ApiError(
        'rate_limit_exceeded',
        `${verdict.reason ?? 'rate limit exceeded'}: retry in ${verdict.rate?.retryAfter ?? 60} s`,
        {
          details: { limit: verdict.rate?.limit, reset: verdict.rate?.reset },
        },
      );
    case 'quota_exceeded':
      throw new ApiError(
        'quota_exceeded',
        `this account has used all ${verdict.rate?.limit ?? ''} compressions of this month (all its keys together); the quota resets on the 1st (UTC)`,
        { details: { limit: verdict.rate?.limit, reset: verdict.rate?.reset } },
      );
  }
}
