// Sign-in by OpenID Connect, authorization code with PKCE, state and nonce. `start` records the
// attempt (the state's hash, the verifier, the nonce) and gives the issuer's URL; `finish` consumes the
// attempt once, and with oauth4webapi checks the callback (`iss`), exchanges the code and checks the ID
// token's claims (issuer, audience, expiry, nonce, azp); the library does not check the token's signature
// (it may trust TLS to the token endpoint), so jose checks it against the issuer's JWKS here. The email
// comes from the ID token, or else from userinfo (whose `sub` must be the token's), and its domain must be
// one the account proved. Then the member is found or made (just in time). An existing member not yet
// linked to the issuer is never linked on the issuer's word alone: the sign-in waits for their proof
// (./link-proof.ts). Anything the issuer or the network gets wrong is an outcome, not a throw.
import { can } from '../accounts/entitlements.ts';
import * as oauth from 'oauth4webapi';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { randomBase62, sha256Hex } from '../accounts/keys.ts';
import type { ToolsTier } from '../accounts/tiers.ts';
import { batchWithAudit, type AuditOrigin } from '../audit/log.ts';
import { randomToken } from '../auth/sessions.ts';
import { ApiError } from '../errors.ts';
import { ssoRow } from './config.ts';
import { clientOf, discover, fetchJwks, httpOptions, type IssuerMetadata } from './discovery.ts';
import { emailDomain, ssoAccountFor } from './domains.ts';
import { beginLinkProof } from './link-proof.ts';
import { SSO_ALGORITHMS, SSO_CLOCK_TOLERANCE_S, SSO_JIT_ROLE, SSO_LOGIN_TTL_MS, SSO_RANDOM_BYTES } from './limits.ts';
import { decryptSecret } from './secret.ts';
import { MAX_MEMBERS_PER_ACCOUNT } from '../teams/limits.ts';

interface SsoEnv {
  DB: D1Database;
  SSO_ENCRYPTION_KEY?: string;
  FETCH_TEST_ORIGIN?: string;
}

export type StartOutcome =
  | { ok: true; url: string; state: string }
  | { ok: false; reason: 'no_sso' }
  | { ok: false; reason: 'issuer_unavailable'; detail: string };

const b64url = (bytes: ArrayBuffer): string =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replace(/=+$/, '');

export async function startSso(
  env: SsoEnv,
  email: string,
  redirectUri: string,
  next: string | undefined,
  now: number,
): Promise<StartOutcome> {
  const accountId = await ssoAccountFor(env.DB, email);
  const config = accountId ? await ssoRow(env.DB, accountId) : null;
  const tier = accountId
    ? await env.DB.prepare('SELECT tools_tier FROM accounts WHERE id = ?')
        .bind(accountId)
        .first<{ tools_tier: ToolsTier }>()
    : null;
  if (!accountId || !config || !tier || !can({ tools: tier.tools_tier }, 'sso')) return { ok: false, reason: 'no_sso' };
  let metadata: IssuerMetadata;
  try {
    metadata = await discover(config.issuer, env.FETCH_TEST_ORIGIN);
  } catch (err) {
    if (err instanceof ApiError) return { ok: false, reason: 'issuer_unavailable', detail: err.message };
    throw err;
  }
  const state = randomToken(SSO_RANDOM_BYTES);
  const nonce = randomToken(SSO_RANDOM_BYTES);
  const verifier = randomToken(SSO_RANDOM_BYTES);
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  await env.DB.batch([
    env.DB.prepare('DELETE FROM sso_logins WHERE expires_at <= ?').bind(now),
    env.DB.prepare(
      'INSERT INTO sso_logins (state_hash, account_id, code_verifier, nonce, next, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).bind(await sha256Hex(state), accountId, verifier, nonce, next ?? null, now, now + SSO_LOGIN_TTL_MS),
  ]);
  const url = new URL(metadata.authorization_endpoint);
  const params = {
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    login_hint: email,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { ok: true, url: url.href, state };
}

export type SsoFailure =
  | 'state' // unknown, used or expired state, or not this browser's
  | 'issuer_error' // the issuer answered with ?error=, or the callback is not the issuer's (`iss`)
  | 'issuer_unavailable' // the issuer could not be reached, or answered too much or nonsense
  | 'token' // the ID token failed a check
  | 'email' // no verified email, or one outside the configured domains
  | 'other_account' // the email is a member of another account, or the member is linked to another subject
  | 'userinfo' // userinfo names another subject than the ID token
  | 'team_full'; // the account has MAX_MEMBERS_PER_ACCOUNT members and invitations

export type FinishOutcome =
  | { ok: true; accountId: string; memberId: string; next: string | null; created: boolean }
  | { ok: false; reason: SsoFailure; accountId: string | null; detail: string }
  /** An existing member, not yet linked: the browser gets `proof` and is asked for the password or mailbox. */
  | { ok: false; reason: 'proof_needed'; accountId: string; proof: string };

export interface IdTokenCheck {
  issuer: string;
  clientId: string;
  nonce: string;
  jwks: { keys: JsonWebKey[] };
  now: number;
}

/** The ID token's checks; throws an Error naming the first that fails. Exported for the token tests. */
export async function verifyIdToken(token: string, check: IdTokenCheck): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, createLocalJWKSet(check.jwks as never), {
    issuer: check.issuer,
    audience: check.clientId,
    algorithms: SSO_ALGORITHMS,
    clockTolerance: SSO_CLOCK_TOLERANCE_S,
    currentDate: new Date(check.now),
    requiredClaims: ['sub', 'exp', 'iat'],
  });
  // Several audiences: the token must have been issued to us (OIDC Core 3.1.3.7, azp).
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== check.clientId)
    throw new Error('azp is not our client id');
  if (payload.nonce !== check.nonce) throw new Error('nonce does not match this sign-in');
  return payload;
}

const describe = (err: unknown): string => {
  if (err instanceof joseErrors.JOSEError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
};

interface Login {
  account_id: string;
  code_verifier: string;
  nonce: string;
  next: string | null;
  expires_at: number;
}

/** Who the issuer says signed in: the ID token's subject, and the email and name from it or from userinfo. */
type Identity =
  | { ok: true; sub: string; email: string; emailVerified: boolean; name: unknown }
  | { ok: false; reason: SsoFailure; detail: string };

export async function finishSso(
  env: SsoEnv,
  callback: URLSearchParams,
  browserState: string | undefined,
  redirectUri: string,
  now: number,
  origin: (memberId: string | null) => AuditOrigin,
): Promise<FinishOutcome> {
  const fail = (reason: SsoFailure, accountId: string | null, detail: string): FinishOutcome => ({
    ok: false,
    reason,
    accountId,
    detail,
  });
  const state = callback.get('state');
  if (!state || !/^[A-Za-z0-9_-]{43}$/.test(state)) return fail('state', null, 'no state');
  // Single use: the row is deleted as it is read, whatever follows.
  const login = await env.DB.prepare(
    'DELETE FROM sso_logins WHERE state_hash = ? RETURNING account_id, code_verifier, nonce, next, expires_at',
  )
    .bind(await sha256Hex(state))
    .first<Login>();
  if (!login || login.expires_at <= now)
    return fail('state', login?.account_id ?? null, 'unknown, used or expired state');
  // The state must come back to the browser that started the sign-in (login CSRF).
  if (browserState !== state) return fail('state', login.account_id, 'state was started in another browser');
  const error = callback.get('error');
  if (error || !callback.get('code')) return fail('issuer_error', login.account_id, error ?? 'no code');
  const config = await ssoRow(env.DB, login.account_id);
  if (!config) return fail('state', login.account_id, 'SSO is no longer configured');
  let who: Identity;
  try {
    who = await identify(env, config, login, callback, redirectUri, now);
  } catch (err) {
    // Our transport's refusals and 502s: the issuer could not be reached, or answered past a limit.
    if (err instanceof ApiError) return fail('issuer_unavailable', login.account_id, err.message);
    throw err;
  }
  if (!who.ok) return fail(who.reason, login.account_id, who.detail);
  const { sub, email } = who;
  if (!email || !who.emailVerified) return fail('email', login.account_id, 'the issuer gave no verified email');
  // A domain the account proved, not merely named (and still has: it may have gone since the sign-in started).
  if ((await ssoAccountFor(env.DB, email)) !== login.account_id)
    return fail('email', login.account_id, `${emailDomain(email)} is not a proved domain of this account's SSO`);
  const member = await env.DB.prepare('SELECT id, account_id, sso_subject FROM members WHERE email = ? COLLATE NOCASE')
    .bind(email)
    .first<{ id: string; account_id: string; sso_subject: string | null }>();
  if (member) {
    if (member.account_id !== login.account_id)
      return fail('other_account', login.account_id, 'this email is a member of another account');
    if (member.sso_subject !== null && member.sso_subject !== sub)
      return fail('other_account', login.account_id, 'this member is linked to another identity at the issuer');
    if (member.sso_subject === sub)
      return { ok: true, accountId: login.account_id, memberId: member.id, next: login.next, created: false };
    // The issuer's word is the word of whoever configured it (an admin, a manage key): it does not make
    // anyone an existing member, owners least of all. The member proves the account is theirs first.
    const proof = await beginLinkProof(
      env.DB,
      { memberId: member.id, accountId: login.account_id, subject: sub, next: login.next },
      now,
    );
    return { ok: false, reason: 'proof_needed', accountId: login.account_id, proof };
  }
  // Just in time: the member is made at the first sign-in, as a developer, or with the role of a pending
  // invitation for this email (which the same batch marks accepted).
  const memberId = `mem_${randomBase62(16)}`;
  const name = typeof who.name === 'string' && who.name.trim() ? who.name.trim().slice(0, 100) : email;
  const invitation = await env.DB.prepare(
    'SELECT id, role FROM invitations WHERE account_id = ? AND email = ? COLLATE NOCASE AND member_id IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1',
  )
    .bind(login.account_id, email, now)
    .first<{ id: string; role: string }>();
  const role = invitation?.role ?? SSO_JIT_ROLE;
  // Within the same cap as invitations (the invitation being accepted not counted twice), checked in the inserting statement.
  const [inserted] = await batchWithAudit(
    env.DB,
    [
      env.DB.prepare(
        'INSERT INTO members (id, account_id, email, name, role, password_hash, sso_subject, created_at) SELECT ?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7 ' +
          'WHERE (SELECT COUNT(*) FROM members WHERE account_id = ?2) + (SELECT COUNT(*) FROM invitations WHERE account_id = ?2 AND member_id IS NULL AND expires_at > ?7 AND id <> ?9) < ?8',
      ).bind(memberId, login.account_id, email, name, role, sub, now, MAX_MEMBERS_PER_ACCOUNT, invitation?.id ?? ''),
      ...(invitation
        ? [
            env.DB.prepare(
              'UPDATE invitations SET accepted_at = ?1, member_id = ?2 WHERE id = ?3 AND member_id IS NULL AND EXISTS (SELECT 1 FROM members WHERE id = ?2)',
            ).bind(now, memberId, invitation.id),
          ]
        : []),
    ],
    origin(memberId),
    {
      accountId: login.account_id,
      action: 'member.joined',
      target: memberId,
      details: { email, role, via: 'sso', ...(invitation ? { invitation: invitation.id } : {}) },
    },
    now,
    { sql: 'EXISTS (SELECT 1 FROM members WHERE id = ?)', params: [memberId] },
  );
  if (inserted?.meta.changes !== 1)
    return fail(
      'team_full',
      login.account_id,
      `the account has ${MAX_MEMBERS_PER_ACCOUNT} members and invitations, the most it may`,
    );
  return { ok: true, accountId: login.account_id, memberId, next: login.next, created: true };
}

/** The callback checked, the code exchanged, the ID token verified, userinfo asked when the token has no email. */
async function identify(
  env: SsoEnv,
  config: { issuer: string; client_id: string; client_secret_enc: string },
  login: Login,
  callback: URLSearchParams,
  redirectUri: string,
  now: number,
): Promise<Identity> {
  const refused = (reason: SsoFailure, detail: string): Identity => ({ ok: false, reason, detail });
  const metadata = await discover(config.issuer, env.FETCH_TEST_ORIGIN);
  const client = clientOf(config.client_id, now);
  const http = httpOptions(env.FETCH_TEST_ORIGIN, new URL(config.issuer));
  let params: URLSearchParams;
  try {
    // The state was matched above; this checks `iss` when the issuer sends it (RFC 9207, mix-up attacks).
    params = oauth.validateAuthResponse(metadata, client, callback, oauth.skipStateCheck);
  } catch (err) {
    return refused('issuer_error', describe(err));
  }
  const secret = await decryptSecret(env.SSO_ENCRYPTION_KEY, login.account_id, config.client_secret_enc);
  let tokens: oauth.TokenEndpointResponse;
  try {
    const response = await oauth.authorizationCodeGrantRequest(
      metadata,
      client,
      oauth.ClientSecretBasic(secret),
      params,
      redirectUri,
      login.code_verifier,
      http,
    );
    tokens = await oauth.processAuthorizationCodeResponse(metadata, client, response, {
      expectedNonce: login.nonce,
      requireIdToken: true,
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    return refused('token', describe(err));
  }
  let claims: JWTPayload;
  try {
    claims = await verifyIdToken(tokens.id_token!, {
      issuer: config.issuer,
      clientId: config.client_id,
      nonce: login.nonce,
      jwks: await fetchJwks(metadata, env.FETCH_TEST_ORIGIN),
      now,
    });
  } catch (err) {
    if (err instanceof ApiError) throw err;
    return refused('token', describe(err));
  }
  const sub = String(claims.sub);
  if (typeof claims.email === 'string' && claims.email) {
    return { ok: true, sub, email: claims.email, emailVerified: claims.email_verified !== false, name: claims.name };
  }
  // OpenID Connect Core 5.4: the claims of the `email` scope may come from userinfo only.
  if (!metadata.userinfo_endpoint)
    return refused('email', 'the ID token carries no email and the issuer has no userinfo endpoint');
  let info: oauth.UserInfoResponse;
  try {
    const response = await oauth.userInfoRequest(metadata, client, tokens.access_token, http);
    info = await oauth.processUserInfoResponse(metadata, client, sub, response);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const mismatch = err instanceof oauth.OperationProcessingError && err.code === oauth.JSON_ATTRIBUTE_COMPARISON;
    return refused(
      mismatch ? 'userinfo' : 'token',
      mismatch ? 'userinfo names another subject than the ID token' : `userinfo: ${describe(err)}`,
    );
  }
  const email = typeof info.email === 'string' ? info.email : '';
  return { ok: true, sub, email, emailVerified: info.email_verified !== false, name: claims.name ?? info.name };
}
