// The operator endpoint the CLI calls after it changes keys or tiers in D1. It exists only when the
// ADMIN_TOKEN secret is set, and is left out of the public OpenAPI document.
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { refreshKeys } from '../accounts/refresh.ts';
import { adminAuth } from '../http/admin-auth.ts';
import type { AppEnv } from '../http/context.ts';
import { resetWasmInstances, wasmMemoryReport } from '../../wasm/instances.ts';

export const REFRESH_PATH = '/internal/keys/refresh';
/** This isolate's codec memories (GET), or drop every codec instance and restart the peak (POST). */
export const CODECS_PATH = '/internal/codecs';
const MAX_REFRESH_IDS = 1000;

const refreshRoute = createRoute({
  method: 'post',
  path: REFRESH_PATH,
  hide: true,
  middleware: [adminAuth] as const,
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({
              key_ids: z
                .array(z.string().regex(/^key_[0-9A-Za-z]{16}$/, 'key ids look like key_ and 16 letters or digits'))
                .max(MAX_REFRESH_IDS)
                .optional(),
              account_id: z
                .string()
                .regex(/^acc_[0-9A-Za-z]{16}$/, 'account ids look like acc_ and 16 letters or digits')
                .optional(),
            })
            .strict(),
        },
      },
    },
  },
  responses: { 200: { description: 'Refreshed' } },
});

const codecsReport = createRoute({
  method: 'get',
  path: CODECS_PATH,
  hide: true,
  middleware: [adminAuth] as const,
  responses: { 200: { description: "This isolate's WebAssembly codec memories" } },
});

const codecsReset = createRoute({
  method: 'post',
  path: `${CODECS_PATH}/reset`,
  hide: true,
  middleware: [adminAuth] as const,
  responses: { 200: { description: 'Every codec instance dropped; the peak restarted' } },
});

export function registerInternal(app: OpenAPIHono<AppEnv>): void {
  app.openapi(refreshRoute, async (c) => {
    const body = c.req.valid('json');
    const refreshed = await refreshKeys(c.env, { keyIds: body.key_ids, accountId: body.account_id });
    return c.json({ data: { refreshed }, meta: { request_id: c.var.requestId } }, 200);
  });

  // For the bench and for operators investigating memory: Emscripten and wasm-bindgen memories only
  // grow, so what an isolate holds after a mix of requests is worth seeing.
  app.openapi(codecsReport, (c) => c.json({ data: wasmMemoryReport(), meta: { request_id: c.var.requestId } }, 200));
  app.openapi(codecsReset, (c) => {
    resetWasmInstances();
    return c.json({ data: wasmMemoryReport(), meta: { request_id: c.var.requestId } }, 200);
  });
}
