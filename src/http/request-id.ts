// X-Request-Id: echo the caller's when it is sane (so their logs and ours line up), else make one.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFor(incoming: string | undefined | null): string {
  if (incoming && SANE_REQUEST_ID.test(incoming)) return incoming;
  return `req_${crypto.randomUUID().replaceAll('-', '')}`;
}
