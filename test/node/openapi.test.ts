// The OpenAPI document is built from the same schemas that validate requests. Validated here, in Node,
// against the official 3.1 schema (the validator compiles schemas at run time, which workerd forbids).
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { COMPRESS_PARTS } from '../fixtures/compress-parts.ts';
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
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/v1/account',
      '/api/v1/audit-logs',
      '/api/v1/audit-logs/export',
      '/api/v1/categories',
      '/api/v1/compress',
      '/api/v1/console/compress',
      '/api/v1/console/compress/plan',
      '/api/v1/health',
      '/api/v1/image-source-hosts',
      '/api/v1/img/{account_id}/{signature}/{options}/{source}',
      '/api/v1/keys',
      '/api/v1/keys/{id}',
      '/api/v1/members',
      '/api/v1/members/invitations',
      '/api/v1/members/invitations/{id}/send',
      '/api/v1/members/{id}',
      '/api/v1/meta-tags',
      '/api/v1/meta-tags/bulk',
      '/api/v1/qr',
      '/api/v1/qr/image',
      '/api/v1/signing-secrets',
      '/api/v1/signing-secrets/{id}',
      '/api/v1/sso',
      '/api/v1/sso/domains/{domain}/verify',
      '/api/v1/tools',
      '/api/v1/tools/{slug}',
      '/api/v1/usage',
      '/api/v1/webhooks',
      '/api/v1/webhooks/{id}',
      '/api/v1/webhooks/{id}/deliveries',
      '/api/v1/webhooks/{id}/deliveries/{msg_id}/retry',
      '/api/v1/webhooks/{id}/rotate-secret',
      '/api/v1/webhooks/{id}/test',
    ]);
    expect(doc.paths['/api/v1/health'].get.security).toEqual([{ ApiKeyHeader: [] }, { BearerAuth: [] }]);
    expect(doc.paths['/api/v1/compress'].post.security).toEqual([{ BearerAuth: [] }]);
    expect(Object.keys(doc.paths['/api/v1/account'].get.responses).sort()).toEqual(['200', '401', '403', '429']);
    expect(doc.paths['/api/v1/account'].get.responses['429'].headers['Retry-After']).toBeDefined();
    expect(Object.keys(doc.paths['/api/v1/health'].get.responses).sort()).toEqual(['200', '401', '403']);
    expect(doc.components.securitySchemes.ApiKeyHeader).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    expect(doc.components.schemas.Error).toBeDefined();
    expect(JSON.stringify(doc)).not.toContain('/internal/');
    // The signed image URL takes no key: its four path segments are its parameters.
    const img = doc.paths['/api/v1/img/{account_id}/{signature}/{options}/{source}'].get;
    expect(img.security).toEqual([]);
    expect(img.parameters.map((p: any) => p.in)).toEqual(['path', 'path', 'path', 'path']);
    expect(img.parameters.map((p: any) => p.name)).toEqual(['account_id', 'signature', 'options', 'source']);
  });

  it('documents the console endpoints as session-cookie operations, apart from the API key ones', async () => {
    const doc = await document();
    expect(doc.components.securitySchemes.SessionCookie).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: '__Host-sr_session',
    });
    const ops = [
      doc.paths['/api/v1/usage'].get,
      doc.paths['/api/v1/console/compress'].post,
      doc.paths['/api/v1/console/compress/plan'].post,
    ];
    for (const op of ops) {
      expect(op.security).toEqual([{ SessionCookie: [] }]);
      expect(op.tags).toEqual(['Account (session)']);
    }
    // Keys and webhooks: a manage key or the console session.
    const manage = [
      doc.paths['/api/v1/keys'].get,
      doc.paths['/api/v1/keys'].post,
      doc.paths['/api/v1/keys/{id}'].delete,
      doc.paths['/api/v1/webhooks'].post,
      doc.paths['/api/v1/webhooks/{id}'].patch,
      doc.paths['/api/v1/webhooks/{id}/deliveries'].get,
      doc.paths['/api/v1/signing-secrets'].post,
      doc.paths['/api/v1/signing-secrets/{id}'].delete,
    ];
    for (const op of manage) {
      expect(op.security).toEqual([{ BearerAuth: [] }, { ApiKeyHeader: [] }, { SessionCookie: [] }]);
      expect(op.tags).toEqual(['Management']);
    }
    expect(Object.keys(doc.paths['/api/v1/webhooks'].post.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '413',
    ]);
    expect(doc.paths['/api/v1/webhooks'].post.description).toContain('plan_upgrade_required');
    expect(doc.paths['/api/v1/webhooks/{id}/test'].post.responses['202']).toBeDefined();
    expect(doc.paths['/api/v1/keys'].post.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateApiKey',
    );
    expect(Object.keys(doc.paths['/api/v1/keys'].post.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '413',
      '429',
    ]);
    expect(doc.paths['/api/v1/keys'].post.description).toContain('X-CSRF-Token');
    expect(Object.keys(doc.paths['/api/v1/keys/{id}'].delete.responses).sort()).toEqual(['200', '401', '403', '404']);
    expect(doc.components.schemas.CreatedApiKey.properties.data).toBeDefined();
  });

  it('documents the catalogue and QR parameters, and the key-free signed image', async () => {
    const doc = await document();
    const params = (path: string) => doc.paths[path].get.parameters.map((p: any) => `${p.in}:${p.name}`);
    expect(params('/api/v1/tools')).toEqual([
      'query:category',
      'query:search',
      'query:fields',
      'query:limit',
      'query:offset',
    ]);
    expect(params('/api/v1/tools/{slug}')).toEqual(['path:slug']);
    expect(params('/api/v1/qr')).toEqual([
      'query:data',
      'query:size',
      'query:color',
      'query:bgcolor',
      'query:format',
      'query:ecc',
      'query:margin',
    ]);
    expect(doc.paths['/api/v1/qr'].get.parameters[0].required).toBe(true);
    const image = doc.paths['/api/v1/qr/image'].get;
    expect(image.security).toEqual([]);
    expect(Object.keys(image.responses['200'].content).sort()).toEqual(['image/png', 'image/svg+xml']);
    expect(Object.keys(image.responses).sort()).toEqual(['200', '301', '304', '400', '403']);
    expect(image.responses['301'].headers.Location).toBeDefined();
    const tool = doc.paths['/api/v1/tools/{slug}'].get;
    expect(Object.keys(tool.responses).sort()).toEqual(['200', '401', '403', '404', '429']);
  });

  it('documents the compress upload: every part, the image responses and each error status', async () => {
    const doc = await document();
    const post = doc.paths['/api/v1/compress'].post;
    const body = post.requestBody.content['multipart/form-data'].schema;
    const schema = body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body;
    expect(Object.keys(schema.properties)).toEqual(COMPRESS_PARTS);
    expect(schema.properties.metadata).toMatchObject({ enum: ['strip', 'keep'], default: 'strip' });
    expect(schema.required).toEqual(['image']);
    expect(schema.properties.image).toMatchObject({ type: 'string', format: 'binary' });
    expect(schema.properties.quality).toMatchObject({ minimum: 1, maximum: 100, default: 80 });
    expect(schema.properties.format.enum).toEqual(['jpeg', 'png', 'webp', 'avif', 'jxl', 'keep', 'json']);
    expect(Object.keys(post.responses['200'].content).sort()).toEqual([
      'application/json',
      'image/avif',
      'image/jpeg',
      'image/jxl',
      'image/png',
      'image/webp',
    ]);
    expect(Object.keys(post.responses['200'].headers)).toEqual(
      expect.arrayContaining([
        'X-Original-Size',
        'X-Compressed-Size',
        'X-Savings-Percent',
        'X-RateLimit-Remaining',
        'X-Image-Width',
        'X-Image-Height',
        'X-Quality',
        'X-Encoder-Quality',
        'X-Target-Reached',
        'X-Crop-Box',
        'X-Gravity',
        'Server-Timing',
        'Content-Disposition',
      ]),
    );
    expect(Object.keys(post.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '408',
      '413',
      '415',
      '422',
      '429',
      '503',
    ]);
  });

  it('documents meta tags: the url parameter, every field of the answer, the bulk body and the 502', async () => {
    const doc = await document();
    const ref = (schema: any) => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
    const get = doc.paths['/api/v1/meta-tags'].get;
    expect(get.parameters.map((p: any) => `${p.in}:${p.name}:${p.required}`)).toEqual(['query:url:true']);
    expect(Object.keys(get.responses).sort()).toEqual(['200', '400', '401', '403', '429', '502']);
    expect(get.responses['502'].description).toContain('details.status');
    const answer = ref(get.responses['200'].content['application/json'].schema);
    const page = ref(answer.properties.data);
    expect(Object.keys(page.properties)).toEqual([
      'url',
      'final_url',
      'status',
      'content_type',
      'title',
      'description',
      'canonical',
      'lang',
      'charset',
      'favicon',
      'meta',
      'open_graph',
      'twitter',
      'json_ld',
    ]);
    expect(Object.keys(answer.properties.meta.properties)).toEqual(expect.arrayContaining(['cache', 'tier']));
    const post = doc.paths['/api/v1/meta-tags/bulk'].post;
    expect(Object.keys(ref(post.requestBody.content['application/json'].schema).properties)).toEqual(['urls']);
    expect(Object.keys(post.responses).sort()).toEqual(['200', '400', '401', '403', '413', '429']);
    const bulk = ref(post.responses['200'].content['application/json'].schema);
    expect(Object.keys(bulk.properties.meta.properties)).toEqual(
      expect.arrayContaining(['total', 'succeeded', 'failed', 'cache_hits']),
    );
  });
});
