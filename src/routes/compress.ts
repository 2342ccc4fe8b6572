// Image API: POST /api/v1/compress. Thin: the key's meter, then the compression it shares with the console's
// Try it (compress-upload.ts): a unit of the account's month reserved, spent only before a 200 and given back
// on every failure, so a failed request never costs quota; an image refused once read (415, 422) counts
// against the key's FAILED_COMPRESSIONS_PER_MINUTE instead.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/context.ts';
import { imageKeyFrom, meterFor } from '../http/auth.ts';
import { compressDoc } from './compress-doc.ts';
import { compressUpload } from './compress-upload.ts';

export const COMPRESS_PATH = '/api/v1/compress';

export function registerCompress(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath(compressDoc);
  app.post(COMPRESS_PATH, async (c) => {
    const { hash, meter } = await meterFor(c.env, imageKeyFrom(c.req.raw.headers), c.req.raw);
    return compressUpload(c, hash, meter);
  });
}
