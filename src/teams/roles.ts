// Roles of a team's members and what each may do. One table: the console's pages and the management
// endpoints both ask `roleMay(role, permission)`, and the role-check test walks every route against it.

export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = [
  /** See usage, keys, webhooks, members: every signed-in member. */
  'read',
  /** Create and revoke API keys; use "Try it" (it spends the account's quota). */
  'keys:write',
  /** Create `manage` keys: such a key acts as KEY_ROLE, so only roles that hold at least as much make one. */
  'keys:manage',
  /** Create, change and delete webhook endpoints; send tests and retries. */
  'webhooks:write',
  /** Invite members, change roles, remove members. */
  'members:write',
  /** Configure single sign-on. */
  'sso:write',
  /** Read and export the audit log. */
  'audit:read',
  /** See the billing tiers; delete the account. */
  'account:owner',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLE_PERMISSIONS: Record<Role, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: ['read', 'keys:write', 'keys:manage', 'webhooks:write', 'members:write', 'sso:write', 'audit:read'],
  developer: ['read', 'keys:write'],
  viewer: ['read'],
};

/**
 * A manage key acts with the powers of an admin: it manages keys, webhooks, members, SSO and reads the
 * audit log, but it is never an owner (it cannot delete the account or make owners).
 */
export const KEY_ROLE: Role = 'admin';

export const roleMay = (role: Role, permission: Permission): boolean => ROLE_PERMISSIONS[role].includes(permission);

/**
 * The roles that may make manage keys, and so keep the ones they made: a member who leaves them (demoted
 * or removed) loses their manage keys in the same batch (src/keys/service.ts, makersKeysRevoked).
 */
export const MANAGE_KEY_MAKERS: readonly Role[] = ROLES.filter((role) => roleMay(role, 'keys:manage'));

export const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);
