import { describe, expect, it } from 'vitest';
import { call, makeKey, toolsHeaders } from './helpers.ts';

describe('smoke', () => {
  it('health answers with a valid key', async () => {
    const k = await makeKey();
    const res = await call('/api/v1/health', { headers: toolsHeaders(k.key) });
    expect(res.status).toBe(200);
    const body = await res.json<any>();
    expect(body.data.status).toBe('ok');
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
  });
});
