// The frame of every console page: head, skip link, site header with navigation, main, footer.
import { SCRIPT, STYLESHEET } from './assets/index.ts';
import { html, type Html } from './html.ts';

export type Section =
  | 'home'
  | 'usage'
  | 'keys'
  | 'webhooks'
  | 'signing'
  | 'members'
  | 'account'
  | 'audit'
  | 'try'
  | 'docs'
  | 'signin'
  | 'signup';

export interface PageOptions {
  title: string;
  /** The CSRF token of the page's forms (the session's, or the pre-sign-in one). */
  csrf: string;
  /** Signed-in account, or null. */
  account: { name: string; email: string } | null;
  section?: Section;
  narrow?: boolean;
  /** Set for wide pages with their own layout (docs). */
  mainClass?: string;
  body: Html;
}

const link = (href: string, label: string, section: Section, active: Section | undefined) =>
  html`<li><a href="${href}"${active === section ? html` aria-current="page"` : ''}>${label}</a></li>`;

function navigation(options: PageOptions): Html {
  const active = options.section;
  if (!options.account) {
    return html`<ul>${link('/docs', 'API reference', 'docs', active)}${link('/signin', 'Sign in', 'signin', active)}${link('/signup', 'Create account', 'signup', active)}</ul>`;
  }
  return html`<ul>
    ${link('/', 'Usage', 'usage', active)}${link('/keys', 'API keys', 'keys', active)}${link('/webhooks', 'Webhooks', 'webhooks', active)}${link('/signing-secrets', 'Image URLs', 'signing', active)}${link('/members', 'Members', 'members', active)}${link('/account', 'Account', 'account', active)}${link('/audit', 'Audit log', 'audit', active)}${link('/try', 'Try it', 'try', active)}${link('/docs', 'API reference', 'docs', active)}
    <li><form method="post" action="/signout"><input type="hidden" name="_csrf" value="${options.csrf}"><button type="submit" class="secondary" title="Signed in as ${options.account.email}">Sign out</button></form></li>
  </ul>`;
}

export function renderPage(options: PageOptions): string {
  const mainClass = options.mainClass ?? (options.narrow ? 'narrow' : '');
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${options.csrf}">
<title>${options.title} · Shrinkray</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${STYLESHEET.path}">
<script src="${SCRIPT.path}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the content</a>
<header class="site"><div class="bar">
<a class="brand" href="/">Shrinkray</a>
<button type="button" class="menu-button" id="menu-button" aria-expanded="true" aria-controls="site-nav" hidden>Menu</button>
<nav aria-label="Main" id="site-nav">${navigation(options)}</nav>
</div></header>
<main id="main" tabindex="-1"${mainClass ? html` class="${mainClass}"` : ''}>
${options.body}
</main>
<footer class="site">Shrinkray: image compression and web tools API. <a href="/api/v1/openapi.json">OpenAPI document</a></footer>
</body>
</html>`}`;
}

export const numberText = (n: number): string => n.toLocaleString('en-US');
