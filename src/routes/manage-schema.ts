// What the management endpoints (keys, webhooks) share in their OpenAPI description: the tag, who may
// call them, and the note about CSRF for the console.
export const MANAGE_TAG = 'Management';
export const MANAGE_TAG_DESCRIPTION =
  'Keys and webhooks: an API key with the `manage` scope (and no other scope), or the signed-in web console (session cookie; unsafe methods also need X-CSRF-Token). ' +
  'A manage key cannot call the image or tools APIs, and image or tools keys cannot call these.';
export const MANAGE_SECURITY: Record<string, string[]>[] = [
  { BearerAuth: [] },
  { ApiKeyHeader: [] },
  { SessionCookie: [] },
];
export const MANAGE_NOTE = ' From the console (session cookie), unsafe methods also need the `X-CSRF-Token` header.';
