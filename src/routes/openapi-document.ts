// The OpenAPI document's top-level members and its path: read by the JSON route (openapi.ts) and the
// console's /docs page, so neither route imports the other.
import { VERSION } from '../version.ts';
import { CONSOLE_TAG } from './console-schema.ts';
import { MANAGE_TAG, MANAGE_TAG_DESCRIPTION } from './manage-schema.ts';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/** The document's top-level members; the paths come from the registry. Shared by the JSON and /docs. */
export function documentConfig(origin: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Shrinkray API',
      version: VERSION,
      description:
        'The Image API (compression) and the Tools API (tool catalogue, QR codes, meta tags) under one account system. Errors use one envelope: `{ "error": { "code", "message", "param"? }, "meta": { "request_id" } }`.',
    },
    servers: [{ url: origin }],
    tags: [
      { name: 'Image API', description: 'Image compression: JPEG, PNG, WebP, GIF and AVIF in, smaller out' },
      { name: 'Tools API', description: 'Tool catalogue, QR codes, meta tags, account' },
      { name: MANAGE_TAG, description: MANAGE_TAG_DESCRIPTION },
      {
        name: CONSOLE_TAG,
        description:
          "The web console's endpoints: a signed-in browser session, not an API key. Unsafe methods need the X-CSRF-Token header.",
      },
    ],
  };
}
