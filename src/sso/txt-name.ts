// Where a domain's proof is published: one rule for the Worker (./domains.ts) and the operator CLI, which
// loads nothing of the Worker's runtime.
import { SSO_TXT_LABEL } from './limits.ts';

export const txtName = (domain: string): string => `${SSO_TXT_LABEL}.${domain}`;
