-- Deleting a user revokes the tokens they created, in the deleting statement, before the foreign
-- key sets created_by null (which would otherwise leave the token acting with its own role:
-- api_token_role). Run by the trigger users_revoke_created_tokens (BEFORE DELETE on users,
-- db/migrations/0031_token_rights.sql).
CREATE OR REPLACE FUNCTION api_tokens_revoke_with_creator() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  UPDATE api_tokens SET revoked_at = now() WHERE created_by = OLD.id AND revoked_at IS NULL;
  RETURN OLD;
END
$$;
