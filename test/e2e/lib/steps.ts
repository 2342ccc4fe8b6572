// One ordered flow as it() steps sharing a page. A failing step is reported as itself, with a
// screenshot of the page it left, and the steps after it are skipped rather than failing for the
// same cause.
import type { Page } from 'playwright-core';
import { it } from 'vitest';
import { screenshot } from './screenshots.ts';

export function orderedSteps(page: () => Page | undefined): (title: string, fn: () => Promise<void>) => void {
  let failed: string | undefined;
  return (title, fn) =>
    it(title, async (ctx) => {
      if (failed !== undefined) ctx.skip(`an earlier step failed: ${failed}`);
      try {
        await fn();
      } catch (error) {
        failed = title;
        const current = page();
        if (current)
          await screenshot(current, `failed-${title.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`, {
            always: true,
          }).catch(() => undefined);
        throw error;
      }
    });
}

/** The flow's page once its setup made it, a path on the service, and a page's level-1 heading. */
export function flowPage(
  page: () => Page | undefined,
  base: () => string,
): {
  p: () => Page;
  url: (path: string) => string;
  heading: (name: string | RegExp) => ReturnType<Page['getByRole']>;
} {
  const p = (): Page => {
    const current = page();
    if (!current) throw new Error('no page: the setup failed');
    return current;
  };
  return {
    p,
    url: (path) => `${base()}${path}`,
    heading: (name) => p().getByRole('heading', { level: 1, name }),
  };
}

/** POST /api/v1/compress from Node, as a caller's script sends it, with `key` as a bearer token. */
export function compressFromNode(
  base: string,
  key: string,
  image: Buffer,
  type: string,
  name: string,
  fields: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(image)], { type }), name);
  for (const [field, value] of Object.entries(fields)) form.append(field, value);
  return fetch(`${base}/api/v1/compress`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
}
