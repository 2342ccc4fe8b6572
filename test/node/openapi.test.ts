// The OpenAPI document is built from the same schemas that validate requests. Validated here, in Node,
// against the official 3.1 schema (the validator compiles schemas at run time, which workerd forbids).
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';

async function document(): Promise<any> {
  const res = await createApp().request('https://api.shrinkray.test/api/v1/openapi.json');
  expect(res.status).toBe(200);
  return res.json();
}

describe('GET /api/v1/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = await document();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes every public endpoint with its security and error responses', async () => {
    const doc = await document();
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/v1/account', '/api/v1/compress', '/api/v1/health']);
    expect(doc.paths['/api/v1/health'].get.security).toEqual([{ ApiKeyHeader: [] }, { BearerAuth: [] }]);
    expect(doc.paths['/api/v1/compress'].post.security).toEqual([{ BearerAuth: [] }]);
    expect(Object.keys(doc.paths['/api/v1/account'].get.responses).sort()).toEqual(['200', '401', '403', '429']);
    expect(doc.paths['/api/v1/account'].get.responses['429'].headers['Retry-After']).toBeDefined();
    expect(Object.keys(doc.paths['/api/v1/health'].get.responses).sort()).toEqual(['200', '401', '403']);
    expect(doc.components.securitySchemes.ApiKeyHeader).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    expect(doc.components.schemas.Error).toBeDefined();
    expect(JSON.stringify(doc)).not.toContain('/internal/');
  });
});
