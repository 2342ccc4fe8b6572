-- Proved SSO domains are looked up again (src/sso/domains.ts, recheckProved; docs/teams.md, "Proving a
-- domain"): a domain whose record was removed, or that changed hands, stops routing to SSO, but only after
-- SSO_DOMAIN_UNVERIFY_MISSES lookups in a row found no record with its value, the first of them at least
-- SSO_DOMAIN_UNVERIFY_AFTER_MS before the last. A lookup that finds it starts the count over; a resolver
-- that fails leaves it as it is.
ALTER TABLE sso_domains ADD COLUMN missing_checks INTEGER NOT NULL DEFAULT 0;  -- lookups in a row without the record
ALTER TABLE sso_domains ADD COLUMN missing_since INTEGER;                     -- ms: the first of them (null: none)
-- The scheduled recheck of proved domains goes oldest check first, as that of unproved ones does.
CREATE INDEX sso_domains_verified_check ON sso_domains (checked_at) WHERE verified_at IS NOT NULL;
