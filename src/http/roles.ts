// The role check's refusal: 403 forbidden, naming the role and the permission it lacks (details), so a
// client can tell it from other 403s (plan, scope, CSRF). Checked by `requires` (src/routes/requires.ts).
import type { Permission } from '../teams/roles.ts';
import { ApiError } from '../errors.ts';

export const roleRefusal = (role: string, permission: Permission): ApiError =>
  new ApiError('forbidden', `your role (${role}) does not allow this: it needs the permission ${permission}`, {
    details: { role, permission },
  });
