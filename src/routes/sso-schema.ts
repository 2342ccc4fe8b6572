// Schemas of the SSO endpoints: one set validates and documents.
import { z } from '@hono/zod-openapi';
import { SSO_MAX_CLIENT_ID, SSO_MAX_CLIENT_SECRET, SSO_MAX_DOMAINS } from '../sso/limits.ts';

const Meta = z.object({ request_id: z.string() });
const domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, {
    error: 'must be a domain name such as example.com',
  });

export const SsoBody = z
  .object({
    issuer: z.string().trim().max(2048).openapi({
      description: 'The OpenID issuer identifier (https), exactly as its discovery document names it',
      example: 'https://login.example.com',
    }),
    client_id: z.string().min(1, { error: 'must not be empty' }).max(SSO_MAX_CLIENT_ID),
    client_secret: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(SSO_MAX_CLIENT_SECRET)
      .openapi({ description: 'Stored encrypted; never returned' }),
    domains: z
      .array(domain)
      .min(1, { error: 'must name at least one domain' })
      .max(SSO_MAX_DOMAINS, { error: `must name at most ${SSO_MAX_DOMAINS} domains` })
      .openapi({ description: 'Email domains whose people sign in through this issuer', example: ['example.com'] }),
    require_sso: z
      .boolean({ error: 'must be true or false' })
      .openapi({ description: 'Password sign-in off for members of these domains (owners keep their password)' }),
  })
  .strict()
  .openapi('SsoConfigInput');

export const SsoDomain = z
  .object({
    domain: z.string().openapi({ example: 'example.com' }),
    verified: z
      .boolean()
      .openapi({ description: 'Whether the TXT record was seen: only a verified domain routes sign-ins to SSO' }),
    txt_name: z.string().openapi({
      description: 'The name of the TXT record to publish',
      example: '_shrinkray-challenge.example.com',
    }),
    txt_value: z.string().openapi({ description: 'The value to publish (random, one per claim)' }),
  })
  .openapi('SsoDomain');

/** A domain of the configuration, as its claim is named (any other is a 404, so no pattern here). */
export const DomainParam = z.object({
  domain: z
    .string()
    .trim()
    .toLowerCase()
    .min(1)
    .max(253)
    .openapi({ param: { name: 'domain', in: 'path' }, example: 'example.com' }),
});

export const SsoDomainOne = z.object({ data: SsoDomain, meta: Meta }).openapi('SsoDomainResponse');

export const SsoConfig = z
  .object({
    issuer: z.string(),
    client_id: z.string(),
    domains: z.array(SsoDomain),
    require_sso: z.boolean(),
    redirect_uri: z.string().openapi({ description: 'Register this redirect URI with the issuer' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('SsoConfig');

export const SsoOne = z.object({ data: SsoConfig, meta: Meta }).openapi('SsoConfigResponse');
