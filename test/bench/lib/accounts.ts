// Accounts and keys a bench makes through the admin CLI. Enterprise, because its per-minute limit is the
// highest: a bench must measure the service, not be slowed or stopped by its own key's window.
import type { Service } from './server.ts';

type Admin = Pick<Service, 'admin'>;

/** A new enterprise-tier account; its id. */
export function enterpriseAccount(service: Admin, email: string, name: string): string {
  return (
    service.admin(['account', 'create', '--email', email, '--name', name, '--tools-tier', 'enterprise']) as {
      id: string;
    }
  ).id;
}

/** A new key of the account with the scopes (comma-separated); the key itself. */
export function newKey(service: Admin, accountId: string, scopes: string, name = 'bench'): string {
  return (
    service.admin(['key', 'create', '--account', accountId, '--scopes', scopes, '--name', name]) as { key: string }
  ).key;
}
