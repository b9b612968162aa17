-- What the portal's pages filter on. The audit log by action (an exact action) or by actor,
-- newest first, and by a target's id alone (the index on (target_type, target_id) needs the
-- type first); a subscription's limit requests, newest first, for its owner's account page; the
-- accounts of a role, newest first, for the operators' list.
CREATE INDEX audit_log_action ON audit_log (action, id);
CREATE INDEX audit_log_actor ON audit_log (actor, id);
CREATE INDEX audit_log_target_id ON audit_log (target_id);
CREATE INDEX limit_requests_subscription ON limit_requests (subscription_id, created_at);
CREATE INDEX accounts_role ON accounts (role, created_at);
