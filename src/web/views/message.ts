// A page with one message and a way on: not found, a refused form.
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

export function messagePage(options: {
  title: string;
  message: string;
  csrf: string;
  account: { name: string; email: string } | null;
}): string {
  const body = html`<h1>${options.title}</h1><p role="alert">${options.message}</p><p><a href="/">Back to the console</a></p>`;
  return renderPage({ title: options.title, csrf: options.csrf, account: options.account, narrow: true, body });
}
