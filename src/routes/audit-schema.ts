// Schemas of the audit log endpoints: one set validates and documents.
import { z } from '@hono/zod-openapi';
import { AUDIT_PAGE_DEFAULT, AUDIT_PAGE_MAX } from '../audit/limits.ts';

const isoTime = (what: string) =>
  z
    .string()
    .datetime({ offset: true, error: 'must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z' })
    .optional()
    .openapi({ description: what, example: '2026-01-01T00:00:00Z' });

export const AuditFilterQuery = z
  .object({
    since: isoTime('Records at or after this time'),
    until: isoTime('Records before this time'),
    action: z
      .string()
      .regex(/^[a-z_]+\.[a-z_]+$/, { error: 'must be an action such as key.created' })
      .optional()
      .openapi({ example: 'key.created' }),
    actor: z
      .string()
      .regex(/^[A-Za-z0-9_]{1,40}$/, {
        error: 'must be an actor id (mem_…, key_…) or type (member, key, operator, anonymous)',
      })
      .optional()
      .openapi({
        description: 'An actor id (mem_…, key_…) or an actor type: member, key, operator, anonymous',
        example: 'operator',
      }),
  })
  .strict();

export const AuditListQuery = AuditFilterQuery.extend({
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, { error: 'must be the next_cursor of a previous page' })
    .optional()
    .openapi({ description: 'next_cursor of the previous page' }),
  limit: z.coerce
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(1, { error: `must be from 1 to ${AUDIT_PAGE_MAX}` })
    .max(AUDIT_PAGE_MAX, { error: `must be from 1 to ${AUDIT_PAGE_MAX}` })
    .optional()
    .openapi({ description: `Records per page (default ${AUDIT_PAGE_DEFAULT})` }),
}).strict();

export const AuditExportQuery = AuditFilterQuery.extend({
  format: z.enum(['ndjson', 'csv'], { error: 'must be ndjson or csv' }).openapi({ example: 'ndjson' }),
}).strict();

export const AuditRecordSchema = z
  .object({
    id: z.string().openapi({ example: 'aud_3kP0aQ9xLm0PzR7a' }),
    time: z.string().openapi({ format: 'date-time' }),
    actor: z.object({
      type: z.enum(['member', 'key', 'operator', 'anonymous']),
      id: z
        .string()
        .nullable()
        .openapi({ description: 'mem_… or key_…; null for the operator and for anonymous attempts' }),
    }),
    action: z.string().openapi({ example: 'key.created' }),
    target: z.string().nullable().openapi({ description: 'What was acted on: key_…, ep_…, mem_…, acc_…' }),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    result: z.enum(['success', 'failure']),
    details: z.record(z.string(), z.unknown()).nullable(),
    prev_hash: z
      .string()
      .openapi({ description: 'hash of the previous record of the account (64 zeros for the first)' }),
    hash: z.string().openapi({
      description:
        'SHA-256 (hex) of JSON [prev_hash, id, account_id, time (ms), actor.type, actor.id, action, target, ip, user_agent, result, details (JSON text)]',
    }),
  })
  .openapi('AuditRecord');

export const AuditPage = z
  .object({
    data: z.array(AuditRecordSchema),
    meta: z.object({
      request_id: z.string(),
      next_cursor: z
        .string()
        .nullable()
        .openapi({ description: 'Pass as cursor for the next (older) page; null on the last' }),
    }),
  })
  .openapi('AuditLogPage');
