-- Webhooks: when an endpoint last failed, so that a failure after a quiet spell (no deliveries for longer than
-- any retry gap) starts a new failure streak instead of continuing an old one and disabling the endpoint at once.
ALTER TABLE webhook_endpoints ADD COLUMN last_failure_at INTEGER;
