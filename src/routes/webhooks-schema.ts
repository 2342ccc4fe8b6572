// Schemas of the webhook endpoints: one set validates and documents.
import { z } from '@hono/zod-openapi';
import { EVENT_TYPES } from '../webhooks/events.ts';
import { DELIVERY_LOG_LIMIT, DESCRIPTION_MAX_LENGTH, MAX_ENDPOINTS_PER_ACCOUNT } from '../webhooks/limits.ts';
import { MAX_URL_LENGTH } from '../fetch/limits.ts';

const Meta = z.object({ request_id: z.string() });

export const WebhookEndpoint = z
  .object({
    id: z.string().openapi({ example: 'ep_7Hk2LmQ9xPz4Rt1a' }),
    url: z.string().openapi({ example: 'https://example.com/hooks/shrinkray' }),
    description: z.string(),
    events: z.array(z.enum(EVENT_TYPES)),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().openapi({
      description: 'Why it is off: by its owner, or automatically after failing for 5 days. null while enabled.',
    }),
    created_at: z.string().openapi({ format: 'date-time' }),
    updated_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('WebhookEndpoint');

const WithSecret = WebhookEndpoint.extend({
  secret: z.string().openapi({
    description: 'The signing secret (Standard Webhooks). Shown on create and on rotate-secret only.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  }),
});

export const EndpointWithSecret = z.object({ data: WithSecret, meta: Meta }).openapi('WebhookEndpointWithSecret');
export const EndpointOne = z.object({ data: WebhookEndpoint, meta: Meta }).openapi('WebhookEndpointResponse');
export const EndpointList = z
  .object({ data: z.array(WebhookEndpoint), meta: Meta.extend({ total: z.number().int() }) })
  .openapi('WebhookEndpointList');

const noControl = /^[^\p{Cc}]*$/u;
const fields = {
  url: z
    .string({ error: 'must be a string' })
    .max(MAX_URL_LENGTH, { error: `must be at most ${MAX_URL_LENGTH} characters` })
    .openapi({
      description: 'Where events are POSTed: https, a public host, port 443 (the rules of fetching external URLs)',
      example: 'https://example.com/hooks/shrinkray',
    }),
  events: z
    .array(z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` }), {
      error: `must be an array of ${EVENT_TYPES.join(', ')}`,
    })
    .min(1, { error: 'must name at least one event type' })
    .transform((list) => EVENT_TYPES.filter((t) => list.includes(t)))
    .openapi({
      description: 'The event types this endpoint receives (webhook.test is always sent on request)',
      example: ['usage.threshold', 'key.created'],
    }),
  description: z
    .string({ error: 'must be a string' })
    .max(DESCRIPTION_MAX_LENGTH, { error: `must be at most ${DESCRIPTION_MAX_LENGTH} characters` })
    .regex(noControl, { error: 'must not contain control characters' })
    .openapi({ description: 'A note to recognise the endpoint by', example: 'Quota alerts' }),
};

const unknownField = (allowed: string) => (issue: { code?: string; keys?: string[] }) =>
  issue.code === 'unrecognized_keys' ? `unknown field "${issue.keys?.[0]}"; allowed: ${allowed}` : undefined;

export const CreateEndpointBody = z
  .strictObject(
    { url: fields.url, events: fields.events, description: fields.description.optional() },
    { error: unknownField('url, events, description') },
  )
  .openapi('CreateWebhookEndpoint', { description: `At most ${MAX_ENDPOINTS_PER_ACCOUNT} endpoints per account` });

export const PatchEndpointBody = z
  .strictObject(
    {
      url: fields.url.optional(),
      events: fields.events.optional(),
      description: fields.description.optional(),
      enabled: z.boolean({ error: 'must be true or false' }).optional(),
    },
    { error: unknownField('url, events, description, enabled') },
  )
  .refine((b) => Object.keys(b).length > 0, { error: 'send at least one of url, events, description, enabled' })
  .openapi('UpdateWebhookEndpoint', {
    description: 'Only the fields sent change. enabled: true switches a disabled endpoint back on.',
  });

export const EndpointIdParam = z.object({
  id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'ep_7Hk2LmQ9xPz4Rt1a' }),
});
export const DeliveryParams = EndpointIdParam.extend({
  msg_id: z.string().openapi({ param: { name: 'msg_id', in: 'path' }, example: 'msg_2bX9Qk4LmP0zR7aVw3Yt5Ns8' }),
});

export const MessageAccepted = z
  .object({
    data: z.object({
      msg_id: z.string().openapi({ description: 'The message id: the webhook-id header of every attempt' }),
    }),
    meta: Meta,
  })
  .openapi('WebhookMessageAccepted');

const Attempt = z.object({
  at: z.string().openapi({ format: 'date-time' }),
  status: z.number().int().nullable().openapi({ description: "The endpoint's HTTP status; null when none came" }),
  error: z.string().nullable().openapi({ description: 'Why the attempt failed; null on success' }),
  duration_ms: z.number().int(),
});

export const DeliveryList = z
  .object({
    data: z
      .array(
        z.object({
          msg_id: z.string(),
          type: z.enum(EVENT_TYPES),
          created_at: z.string().openapi({ format: 'date-time' }),
          state: z.enum(['pending', 'succeeded', 'failed']),
          next_attempt_at: z
            .string()
            .nullable()
            .openapi({ format: 'date-time', description: 'When the next attempt is due; null unless pending' }),
          attempts: z.array(Attempt),
        }),
      )
      .openapi({ description: `The endpoint's last ${DELIVERY_LOG_LIMIT} messages, newest first (kept 30 days)` }),
    meta: Meta,
  })
  .openapi('WebhookDeliveryList');
