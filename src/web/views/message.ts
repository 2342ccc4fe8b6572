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

/** What a browser gets at an address that is no page: the console's frame, and the ways on. */
export function pageNotFound(options: {
  path: string;
  csrf: string;
  account: { name: string; email: string } | null;
}): string {
  const ways = options.account
    ? html`<li><a href="/">Your usage</a></li><li><a href="/keys">API keys</a></li>`
    : html`<li><a href="/">Home</a></li><li><a href="/signin">Sign in</a></li><li><a href="/signup">Create an account</a></li>`;
  const body = html`<h1>Page not found</h1><p>There is no page at <code>${options.path}</code>. Check the address, or go on from here:</p>
<ul>${ways}<li><a href="/docs">API reference</a></li></ul>`;
  return renderPage({ title: 'Page not found', csrf: options.csrf, account: options.account, narrow: true, body });
}
