-- Drops the enum type member_role_old that 0037 left when it made member_role anew. No column,
-- default or constraint uses it after 0037. When 0037 ran in this same migrate, the functions of
-- the previous build's function files that take or return a member role (api_token_role*) still
-- name it: CASCADE drops them with it, and their function files make them again for member_role
-- right after the migrations (db/migrate.ts applies the files whose functions are missing).
DROP TYPE IF EXISTS "public"."member_role_old" CASCADE;
