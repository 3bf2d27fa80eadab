-- Organization roles are owner and member. An organization's owners own all its projects; its
-- members see the organization and create projects in it, and hold on its projects only the roles
-- given them there. Project roles stay viewer, editor and owner.
--
-- member_role gains 'member', ordered below 'viewer' (max() over a user's memberships stays the
-- effective role). A value added with ALTER TYPE ... ADD VALUE cannot be used in the transaction
-- that adds it, and migrations run in one transaction, so the type is made anew under its name and
-- the columns move to it; the old one is renamed member_role_old. The functions that return it
-- (server/tenancy/sql/api_token_role*.sql) are made again for the new type by the function files
-- after the migrations (db/function-files.ts drops what CREATE OR REPLACE cannot change), so
-- member_role_old has no user left then; a later migration drops it.
--
-- Organization editors and viewers become members. So that nobody loses or gains a right on a
-- project, each of them first gets, on every Active project of the organization, the role the
-- organization gave them (kept when they already hold a higher one there). Projects being deleted
-- accept no new membership (project_refuse_new_objects); their deletion proceeds as before.
ALTER TYPE "public"."member_role" RENAME TO "member_role_old";
--> statement-breakpoint
CREATE TYPE "public"."member_role" AS ENUM('member', 'viewer', 'editor', 'owner');
--> statement-breakpoint
INSERT INTO "memberships" ("user_id", "project_id", "role")
SELECT m."user_id", p."id", m."role"
FROM "memberships" m
JOIN "projects" p ON p."organization_id" = m."organization_id" AND p."phase" = 'Active'
WHERE m."organization_id" IS NOT NULL AND m."role" <> 'owner'
ON CONFLICT ("user_id", "project_id") WHERE "project_id" IS NOT NULL
DO UPDATE SET "role" = greatest("memberships"."role", excluded."role");
--> statement-breakpoint
ALTER TABLE "memberships" ALTER COLUMN "role" SET DATA TYPE "public"."member_role"
  USING (CASE WHEN "organization_id" IS NOT NULL AND "role" <> 'owner' THEN 'member' ELSE "role"::text END)::"public"."member_role";
--> statement-breakpoint
ALTER TABLE "invitations" ALTER COLUMN "role" SET DATA TYPE "public"."member_role"
  USING (CASE WHEN "organization_id" IS NOT NULL AND "role" <> 'owner' THEN 'member' ELSE "role"::text END)::"public"."member_role";
--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "role" DROP DEFAULT;
--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "role" SET DATA TYPE "public"."member_role" USING "role"::text::"public"."member_role";
--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "role" SET DEFAULT 'editor';
--> statement-breakpoint
ALTER TABLE "memberships" ADD CONSTRAINT "memberships_role_scope" CHECK (CASE WHEN "memberships"."organization_id" IS NOT NULL THEN "memberships"."role"::text IN ('member', 'owner') ELSE "memberships"."role"::text <> 'member' END);
--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_role_scope" CHECK (CASE WHEN "invitations"."organization_id" IS NOT NULL THEN "invitations"."role"::text IN ('member', 'owner') ELSE "invitations"."role"::text <> 'member' END);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_role_project" CHECK ("api_tokens"."role"::text <> 'member');
