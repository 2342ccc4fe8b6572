// Event types and the message body of Standard Webhooks: { type, timestamp, data }. The body is made once,
// when the event is recorded, and every attempt sends exactly those bytes under the same id.
import { randomBase62 } from '../accounts/keys.ts';

export const EVENT_TYPES = [
  'key.created',
  'key.revoked',
  'usage.threshold',
  'rate_limit.exceeded',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An event ready to deliver: the id is the `webhook-id` header, `body` the exact payload. */
export interface WebhookEvent {
  id: string;
  accountId: string;
  type: EventType;
  body: string;
  createdAt: number;
}

export const newMessageId = (): string => `msg_${randomBase62(24)}`;

export function messageBody(type: EventType, at: number, data: Record<string, unknown>): string {
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
}

export function event(
  accountId: string,
  type: EventType,
  at: number,
  data: Record<string, unknown>,
  id = newMessageId(),
): WebhookEvent {
  return { id, accountId, type, body: messageBody(type, at, data), createdAt: at };
}

export interface ThresholdData {
  key_id: string;
  api: 'image' | 'tools';
  window: 'month' | 'day';
  percent: number;
  used: number;
  limit: number;
  /** Unix seconds at which the window resets. */
  reset: number;
}

export interface RateLimitData {
  key_id: string;
  api: 'image' | 'tools';
  window: 'minute' | 'day' | 'month';
  limit: number;
  reset: number;
}
