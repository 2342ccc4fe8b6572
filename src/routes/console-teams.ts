// The console's team pages: members (invite, change roles, remove, leave), the invitation link's page
// (join with a password), and the audit log (filters, pages, exports). Roles are checked by the role gate
// (src/http/role-gate.ts); the domain is src/teams/ and src/audit/.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { isEnterprise } from '../accounts/enterprise.ts';
import { AUDIT_PAGE_DEFAULT } from '../audit/limits.ts';
import { listAudit } from '../audit/query.ts';
import { FORM_BODY_MAX_BYTES, NAME_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../auth/limits.ts';
import { hashPassword } from '../auth/password.ts';
import { clock } from '../env.ts';
import { auditOrigin } from '../http/audit-origin.ts';
import { mailInvitation } from '../teams/invitation-mail.ts';
import type { AppEnv } from '../http/context.ts';
import { csrfTokenFor, csrfValid } from '../http/csrf.ts';
import { field, readForm } from '../http/form-body.ts';
import { redirectPage, sendPage } from '../http/pages.ts';
import { clearCookie, loadSession, requireSessionPage, sessionToken } from '../http/session.ts';
import { deleteSession } from '../auth/sessions.ts';
import { ssoCoversEmail } from '../sso/domains.ts';
import {
  accept,
  changeRole,
  invite,
  listMembers,
  openInvitation,
  pendingInvitations,
  removeMember,
  type ChangeOutcome,
} from '../teams/members.ts';
import { can, isRole } from '../teams/roles.ts';
import { auditPage } from '../web/views/audit.ts';
import { acceptPage, membersPage, type MembersState } from '../web/views/members.ts';
import { messagePage } from '../web/views/message.ts';
import { AuditExportQuery, AuditListQuery } from './audit-schema.ts';
import { exportResponse, filtersOf } from './audit-logs.ts';
import { signInOrigin, startSession } from './auth-pages.ts';
import { invitationUrl } from './members.ts';

const EXPIRED_FORM = 'This form had expired or came from another site. Nothing was changed; please try again.';
const signedIn = [loadSession, requireSessionPage] as const;
const sessionOf = (c: Context<AppEnv>) => c.var.session!;

async function members(c: Context<AppEnv>, extra: Partial<MembersState> = {}, status: 200 | 400 | 403 = 200) {
  const s = sessionOf(c);
  const enterprise = isEnterprise(s.account.tools_tier);
  const state: MembersState = {
    csrf: csrfTokenFor(c),
    account: s.account,
    me: { id: s.member.id, role: s.member.role },
    enterprise,
    manage: can(s.member.role, 'members:write'),
    members: enterprise ? await listMembers(c.env.DB, s.account.id) : [],
    invitations: enterprise ? await pendingInvitations(c.env.DB, s.account.id, clock(c.env)) : [],
    ...extra,
  };
  return sendPage(c, membersPage(state), status);
}

function changeMessage(outcome: Exclude<ChangeOutcome, { ok: true }>): string {
  switch (outcome.reason) {
    case 'not_found':
      return 'There is no such member in your account.';
    case 'owner_only':
      return 'Only an owner may make owners, or change or remove an owner.';
    case 'last_owner':
      return 'The last owner can neither leave nor be demoted: make another member owner first.';
  }
}

/** Form fields without the empty ones, so an unused filter is not a filter. */
const present = (q: Record<string, string>) => Object.fromEntries(Object.entries(q).filter(([, v]) => v !== ''));

export function registerConsoleTeams(app: OpenAPIHono<AppEnv>): void {
  app.get('/members', ...signedIn, (c) => members(c));

  app.post('/members/invitations', ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    if (!isEnterprise(s.account.tools_tier)) return members(c, {}, 403);
    const email = field(form, 'email').trim();
    const role = field(form, 'role');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      return members(c, { error: 'Enter an email address like name@example.com.' }, 400);
    if (!isRole(role)) return members(c, { error: 'Choose a role.' }, 400);
    if (role === 'owner' && s.member.role !== 'owner')
      return members(c, { error: 'Only an owner may invite an owner.' }, 403);
    const made = await invite(c.env.DB, s.account.id, { email, role }, clock(c.env), auditOrigin(c));
    if (!made.ok) {
      return members(
        c,
        {
          error:
            made.reason === 'email_taken'
              ? 'This email already belongs to a member, or has a pending invitation.'
              : `Your account has ${made.max} members and invitations, the most it may.`,
        },
        400,
      );
    }
    // Rendered, not redirected: the link must not travel in a URL of ours or be shown twice.
    const mailed = await mailInvitation(c.env, s.account.id, made.invitation, made.token, clock(c.env));
    return members(c, { created: { ...made.invitation, url: invitationUrl(c, made.token), mailed } });
  });

  app.post('/members/:id/role', ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    const role = field(form, 'role');
    if (!isRole(role)) return members(c, { error: 'Choose a role.' }, 400);
    const outcome = await changeRole(
      c.env,
      s.account.id,
      c.req.param('id'),
      role,
      s.member.role,
      clock(c.env),
      auditOrigin(c),
    );
    if (!outcome.ok) return members(c, { error: changeMessage(outcome) }, outcome.reason === 'owner_only' ? 403 : 400);
    return redirectPage(c, '/members');
  });

  app.post('/members/:id/remove', ...signedIn, async (c) => {
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    if (!(await csrfValid(c, field(form, '_csrf')))) return members(c, { error: EXPIRED_FORM }, 403);
    const s = sessionOf(c);
    const self = c.req.param('id') === s.member.id;
    const outcome = await removeMember(
      c.env,
      s.account.id,
      c.req.param('id'),
      s.member.role,
      self,
      clock(c.env),
      auditOrigin(c),
    );
    if (!outcome.ok) return members(c, { error: changeMessage(outcome) }, outcome.reason === 'owner_only' ? 403 : 400);
    if (!self) return redirectPage(c, '/members');
    await deleteSession(c.env.DB, sessionToken(c));
    clearCookie(c, 'session');
    return redirectPage(c, '/');
  });

  // The invitation link: open to anyone holding it (it is the credential), signed in or not.
  app.get('/invitations/:token', loadSession, async (c) => {
    const open = await openInvitation(c.env.DB, c.req.param('token'), clock(c.env));
    if (!open) return gone(c);
    const account = await c.env.DB.prepare('SELECT name FROM accounts WHERE id = ?')
      .bind(open.accountId)
      .first<{ name: string }>();
    const sso = await ssoCoversEmail(c.env.DB, open.accountId, open.email);
    return sendPage(
      c,
      acceptPage({
        csrf: csrfTokenFor(c),
        token: c.req.param('token'),
        email: open.email,
        accountName: account?.name ?? '',
        role: open.role,
        sso,
      }),
    );
  });

  app.post('/invitations/:token', loadSession, async (c) => {
    const token = c.req.param('token');
    const form = await readForm(c.req.raw, FORM_BODY_MAX_BYTES);
    const open = await openInvitation(c.env.DB, token, clock(c.env));
    if (!open) return gone(c);
    const again = async (status: 400 | 403, error: string) => {
      const account = await c.env.DB.prepare('SELECT name FROM accounts WHERE id = ?')
        .bind(open.accountId)
        .first<{ name: string }>();
      return sendPage(
        c,
        acceptPage({
          csrf: csrfTokenFor(c),
          token,
          email: open.email,
          accountName: account?.name ?? '',
          role: open.role,
          sso: false,
          error,
        }),
        status,
      );
    };
    if (!(await csrfValid(c, field(form, '_csrf')))) return again(403, EXPIRED_FORM);
    const name = field(form, 'name').trim();
    const password = field(form, 'password');
    if (name === '' || name.length > NAME_MAX_LENGTH)
      return again(400, `Enter your name (at most ${NAME_MAX_LENGTH} characters).`);
    if (password.length < PASSWORD_MIN_LENGTH || password.length > PASSWORD_MAX_LENGTH)
      return again(400, `Choose a password of ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`);
    const joined = await accept(
      c.env.DB,
      token,
      { name, passwordHash: await hashPassword(password) },
      clock(c.env),
      (id) => signInOrigin(c, id),
    );
    if (!joined.ok)
      return joined.reason === 'gone' ? gone(c) : again(400, 'This email already belongs to a member of an account.');
    return startSession(c, joined, undefined);
  });

  app.get('/audit', ...signedIn, async (c) => {
    const s = sessionOf(c);
    const raw = present(c.req.query());
    const parsed = AuditListQuery.safeParse(raw);
    const filters = { since: raw.since, until: raw.until, action: raw.action, actor: raw.actor };
    const enterprise = isEnterprise(s.account.tools_tier);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendPage(
        c,
        auditPage({
          csrf: csrfTokenFor(c),
          account: s.account,
          enterprise,
          records: [],
          filters,
          next: null,
          error: `The ${String(issue?.path[0] ?? 'filter')} ${issue?.message ?? 'is not valid'}.`,
        }),
        400,
      );
    }
    if (!enterprise)
      return sendPage(
        c,
        auditPage({ csrf: csrfTokenFor(c), account: s.account, enterprise, records: [], filters, next: null }),
      );
    const q = parsed.data;
    const page = await listAudit(c.env.DB, s.account.id, filtersOf(q), {
      limit: q.limit ?? AUDIT_PAGE_DEFAULT,
      cursor: q.cursor === undefined ? undefined : Number(q.cursor),
    });
    const next =
      page.nextCursor === null
        ? null
        : new URLSearchParams({
            ...present({ since: q.since ?? '', until: q.until ?? '', action: q.action ?? '', actor: q.actor ?? '' }),
            cursor: page.nextCursor,
          }).toString();
    return sendPage(
      c,
      auditPage({ csrf: csrfTokenFor(c), account: s.account, enterprise, records: page.records, filters, next }),
    );
  });

  app.get('/audit/export', ...signedIn, async (c) => {
    const s = sessionOf(c);
    const parsed = AuditExportQuery.safeParse(present(c.req.query()));
    if (!parsed.success || !isEnterprise(s.account.tools_tier)) {
      const message = parsed.success
        ? 'The audit log comes with the enterprise tools tier.'
        : 'These filters are not valid: go back and correct them.';
      return sendPage(
        c,
        messagePage({ title: 'No export', message, csrf: csrfTokenFor(c), account: s.account }),
        parsed.success ? 403 : 400,
      );
    }
    return exportResponse(c.env.DB, s.account.id, filtersOf(parsed.data), parsed.data.format);
  });
}

function gone(c: Context<AppEnv>): Response {
  const message =
    'This invitation link has been used, has expired, or never existed. Ask the person who invited you for a new one.';
  return sendPage(
    c,
    messagePage({
      title: 'Invitation not valid',
      message,
      csrf: csrfTokenFor(c),
      account: c.var.session?.account ?? null,
    }),
    404,
  );
}
