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
          await screenshot(current, `failed-${title.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`).catch(
            () => undefined,
          );
        throw error;
      }
    });
}
