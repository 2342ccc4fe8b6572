// The signed-in console's pages: usage (/), API keys (/keys, with revoke confirmation), Try it (/try),
// the public API reference (/docs) and the static assets. Thin: services in src/console render through
// the views in src/web.
import { requires } from './requires.ts';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { SCOPES, type Scope } from '../accounts/tiers.ts';
import { FORM_BODY_MAX_BYTES } from '../auth/limits.ts';
import { createKey, listKeys, revokeKey, type ConsoleKey } from '../keys/service.ts';
import { accountUsage } from '../console/usage.ts';
import { accountMeter } from '../metering/account-meter-stub.ts';
import { secondsUntil } from '../metering/windows.ts';
import { clock } from '../env.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { loadSession, requireSessionPage } from '../http/session.ts';
import { roleMay } from '../teams/roles.ts';
import { ASSETS } from '../web/assets/index.ts';
import { type ApiPage, renderApiPages, type OpenApiDocument } from '../web/docs-page.ts';
import { renderPage } from '../web/layout.ts';
import { keysPage, revokePage } from '../web/views/keys.ts';
import { tryPage } from '../web/views/try.ts';
import { usagePage } from '../web/views/usage.ts';
import { landingPage } from '../web/views/landing.ts';
import {
  compressedSample,
  SAMPLE_CACHE_CONTROL,
  SAMPLE_COMPRESSED_PATH,
  SAMPLE_PATH,
  sampleBytes,
} from '../web/sample.ts';
import { compressConfig } from '../compress/config.ts';
import { messagePage } from '../web/views/message.ts';
import { CONSOLE_COMPRESS_PATH, CreateKeyBody, TRY_PLAN_PATH } from './console-schema.ts';
import { documentConfig } from './openapi-document.ts';

/** The API reference's index; each operation and schema has a page below it. */
export const DOCS_PATH = '/docs';

const EXPIRED_FORM = 'This form had expired or came from another site. Nothing was changed; please try again.';

const signedIn = [loadSession, requireSessionPage] as const;
const accountOf = (c: Context<AppEnv>) => c.var.session!.account;

/** The keys page as this member sees it: management keys are offered only to the roles that make them. */
const keysState = (c: Context<AppEnv>, keys: ConsoleKey[]) => ({
  csrf: csrfTokenFor(c),
  origin: new URL(c.req.url).origin,
  account: accountOf(c),
  keys,
  makesManageKeys: roleMay(c.var.session!.member.role, 'keys:manage'),
});

async function renderKeys(
  c: Context<AppEnv>,
  extra: Partial<Parameters<typeof keysPage>[0]> = {},
  status: 200 | 400 | 403 | 429 = 200,
) {
  return sendPage(c, keysPage({ ...keysState(c, await listKeys(c.env.DB, accountOf(c).id)), ...extra }), status);
}

function notFoundPage(c: Context<AppEnv>, message: string): Response {
  return sendPage(
    c,
    messagePage({ title: 'Not found', message, csrf: csrfTokenFor(c), account: c.var.session?.account ?? null }),
    404,
  );
}

async function renderLanding(c: Context<AppEnv>): Promise<string> {
  const sample = await compressedSample(compressConfig(c.env));
  return landingPage({
    csrf: csrfTokenFor(c),
    origin: new URL(c.req.url).origin,
    sample: {
      width: sample.width,
      height: sample.height,
      originalBytes: (await sampleBytes()).length,
      compressedBytes: sample.bytes.length,
      quality: sample.quality,
    },
  });
}

export function registerConsolePages(app: OpenAPIHono<AppEnv>): void {
  app.get('/', requires('read'), loadSession, async (c) => {
    if (!c.var.session) return sendPage(c, await renderLanding(c));
    const report = await accountUsage(c.env, accountOf(c), clock(c.env));
    return sendPage(c, usagePage({ csrf: csrfTokenFor(c), account: accountOf(c), report }));
  });

  app.get('/keys', requires('read'), ...signedIn, async (c) => {
    const keys = await listKeys(c.env.DB, accountOf(c).id);
    // The notice names a key of this account by id, so a crafted link cannot make the page say anything else.
    const revoked = keys.find((k) => k.id === c.req.query('revoked') && k.revoked_at !== null);
    const notice = revoked
      ? `The key "${revoked.name}" is revoked: requests with it are refused from now on.`
      : undefined;
    return sendPage(c, keysPage({ ...keysState(c, keys), notice }));
  });

  app.post('/keys', requires('keys:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES, ['scopes']);
    const scopes = (Array.isArray(form.scopes) ? form.scopes : []).filter((s): s is Scope =>
      (SCOPES as readonly string[]).includes(s),
    );
    const values = { name: field(form, 'name'), scopes };
    if (!(await csrfValid(c, field(form, '_csrf')))) return renderKeys(c, { error: EXPIRED_FORM, values }, 403);
    const parsed = CreateKeyBody.safeParse({ name: values.name, scopes });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const what =
        issue?.path[0] !== 'scopes'
          ? `The key name ${issue?.message ?? 'is not valid'}.`
          : scopes.includes('manage')
            ? 'A management key cannot also call the image or tools API: make a separate key.'
            : 'Choose at least one API the key may call.';
      return renderKeys(c, { error: what, values }, 400);
    }
    const { member } = c.var.session!;
    const created = await createKey(
      c.env,
      accountOf(c).id,
      parsed.data,
      { role: member.role, maker: member.id },
      clock(c.env),
      auditOrigin(c),
    );
    if (!created.ok && (created.reason === 'forbidden' || created.reason === 'maker_lost_role')) {
      const role = created.reason === 'forbidden' ? `Your role (${member.role})` : 'Your role, changed just now,';
      return renderKeys(
        c,
        {
          error: `${role} cannot make management keys: a management key acts as an admin. Ask an owner or admin of the account.`,
          values,
        },
        403,
      );
    }
    if (!created.ok && created.reason === 'too_many_today') {
      c.header('Retry-After', String(secondsUntil(created.reset, clock(c.env))));
      return renderKeys(
        c,
        {
          error: `Your account has created ${created.max} keys today, the most it may create in a day (revoked keys count). Try again after 00:00 UTC.`,
          values,
        },
        429,
      );
    }
    if (!created.ok)
      return renderKeys(
        c,
        {
          error: `You have ${created.max} active keys, the most an account may hold. Revoke one you no longer use first.`,
          values,
        },
        400,
      );
    // Rendered, not redirected: the key must never travel in a URL or be shown twice.
    return renderKeys(c, { created: created.key });
  });

  app.get('/keys/:id/revoke', requires('keys:write'), ...signedIn, async (c) => {
    const key = (await listKeys(c.env.DB, accountOf(c).id)).find(
      (k) => k.id === c.req.param('id') && k.revoked_at === null,
    );
    if (!key) return notFoundPage(c, 'There is no active key with this id in your account.');
    return sendPage(c, revokePage(csrfTokenFor(c), accountOf(c), key));
  });

  app.post('/keys/:id/revoke', requires('keys:write'), ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return renderKeys(c, { error: EXPIRED_FORM }, 403);
    const key = await revokeKey(c.env, accountOf(c).id, c.req.param('id'), clock(c.env), auditOrigin(c));
    if (!key) return notFoundPage(c, 'There is no key with this id in your account.');
    return redirectPage(c, `/keys?revoked=${key.id}`);
  });

  app.get('/try', requires('keys:write'), ...signedIn, async (c) => {
    const now = clock(c.env);
    // The month is the account's, shared by its keys and this page.
    const month = await accountMeter(c.env, accountOf(c).id).month(accountOf(c).image_tier, now);
    return sendPage(
      c,
      tryPage({
        csrf: csrfTokenFor(c),
        account: accountOf(c),
        month,
        endpoint: CONSOLE_COMPRESS_PATH,
        planEndpoint: TRY_PLAN_PATH,
      }),
    );
  });

  // The reference depends only on the routes and the origin (its examples' base URL): render it once per
  // origin and isolate. Few origins ever reach one isolate; the cap keeps a Host-header spray harmless.
  const references = new Map<string, ReturnType<typeof renderApiPages>>();
  const reference = (origin: string) => {
    let pages = references.get(origin);
    if (pages) return pages;
    pages = renderApiPages(app.getOpenAPI31Document(documentConfig(origin)) as unknown as OpenApiDocument, DOCS_PATH);
    if (references.size >= 8) references.clear();
    references.set(origin, pages);
    return pages;
  };
  const docsPage = (c: Context<AppEnv>, page: ApiPage) =>
    sendPage(
      c,
      renderPage({
        title: page.title,
        csrf: csrfTokenFor(c),
        account: c.var.session?.account ?? null,
        section: 'docs',
        mainClass: 'docs',
        body: page.body,
      }),
    );

  app.get(DOCS_PATH, loadSession, (c) => docsPage(c, reference(new URL(c.req.url).origin).index));
  app.get(`${DOCS_PATH}/:page`, loadSession, (c) => {
    const page = reference(new URL(c.req.url).origin).pages.get(c.req.param('page'));
    if (!page)
      return notFoundPage(c, 'The API reference has no such page: its index lists every operation and schema.');
    return docsPage(c, page);
  });

  app.get(SAMPLE_PATH, async (c) => {
    c.header('Cache-Control', SAMPLE_CACHE_CONTROL);
    c.header('Content-Type', 'image/jpeg');
    return c.body(await sampleBytes());
  });
  app.get(SAMPLE_COMPRESSED_PATH, async (c) => {
    const sample = await compressedSample(compressConfig(c.env));
    c.header('Cache-Control', SAMPLE_CACHE_CONTROL);
    c.header('Content-Type', 'image/jpeg');
    c.header('X-Original-Size', String((await sampleBytes()).length));
    c.header('X-Compressed-Size', String(sample.bytes.length));
    return c.body(sample.bytes.slice());
  });

  for (const asset of ASSETS) {
    app.get(asset.path, (c) => {
      c.header('Cache-Control', 'public, max-age=31536000, immutable');
      c.header('Content-Type', asset.type);
      return c.body(asset.body);
    });
  }
}
