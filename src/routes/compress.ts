// API A. This release authenticates and reports the quota; the codec pipeline lands with the
// compression issue, and until then the endpoint answers 501 without spending quota.
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { imageAuth } from '../http/auth.ts';
import type { AppEnv } from '../http/context.ts';
import { ApiError } from '../http/errors.ts';
import { IMAGE_SECURITY, errorResponses } from './schemas.ts';

export const compressRoute = createRoute({
  method: 'post',
  path: '/api/v1/compress',
  summary: 'Compress an image (multipart upload). Not yet available: answers 501 after authenticating',
  tags: ['Image API'],
  security: IMAGE_SECURITY,
  middleware: [imageAuth()] as const,
  responses: errorResponses('unauthorized', 'forbidden', 'not_implemented'),
});

export function registerCompress(app: OpenAPIHono<AppEnv>): void {
  app.openapi(compressRoute, () => {
    throw new ApiError('not_implemented', 'image compression is not available in this version yet; no quota was used');
  });
}
