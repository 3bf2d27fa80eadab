CREATE INDEX "api_tokens_created_by" ON "api_tokens" USING btree ("created_by") WHERE "api_tokens"."created_by" is not null;--> statement-breakpoint
-- Hand-written: drizzle cannot express triggers.
--
-- A project token acts with the lesser of its own role and its creator's current rights in its
-- project (server/tenancy/sql/api_token_role.sql). Deleting a user revokes the tokens they created,
-- in the deleting statement, before the foreign key sets created_by null
-- (server/tenancy/sql/api_tokens_revoke_with_creator.sql, the trigger's function).
CREATE TRIGGER users_revoke_created_tokens BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION api_tokens_revoke_with_creator();
--> statement-breakpoint
-- Tokens whose creator was deleted before this migration: created_by was set null, but the audit
-- log says a user created them (tokens nobody created are recorded with a system actor). They die
-- with their creator, as they would now.
UPDATE api_tokens t SET revoked_at = now()
WHERE t.created_by IS NULL AND t.kind = 'project' AND t.revoked_at IS NULL
  AND EXISTS (SELECT 1 FROM events e WHERE e.object_type = 'apiToken' AND e.object_id = t.id::text AND e.action = 'token.create' AND e.actor_type = 'user');
