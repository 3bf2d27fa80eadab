-- Users record how their e-mail address was shown to be theirs (`email_verified_by`, when:
-- `email_verified_at`), and how their account came to be (`created_via`). An invitation link went
-- to whoever invited the address, so an account made from one proves nothing about the address:
-- such an account is unverified until its holder proves the address (OIDC sign-in never attaches to
-- an unverified account). Invitations carry a second secret, `mail_token_hash`, the hash of the
-- link mailed to the invited address only: following it proves control of the mailbox.
--
-- Existing users: an account made from an invitation is recognised by the invitation it accepted
-- in the same transaction (accepted_at = created_at, by the same e-mail) or by its audit event
-- (actor `invitation:<e-mail>`); it stays unverified. Accounts the OIDC sign-in made (no password,
-- audit actor `oidc`) count as verified by `oidc`, the seed's demo users by `seed`, and every other
-- account (made by an administrator or the CLI) by `admin`, each as of its creation.
ALTER TABLE "users" ADD COLUMN "created_via" text DEFAULT 'admin' NOT NULL;
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "email_verified_by" text;
--> statement-breakpoint
UPDATE "users" u SET "created_via" = 'invitation'
WHERE EXISTS (SELECT 1 FROM "invitations" i WHERE i."accepted_by" = u."id" AND i."email" = u."email" AND i."accepted_at" = u."created_at")
   OR EXISTS (SELECT 1 FROM "events" e WHERE e."action" = 'user.create' AND e."object_id" = u."id"::text AND e."actor_label" LIKE 'invitation:%');
--> statement-breakpoint
UPDATE "users" u SET "created_via" = 'oidc'
WHERE u."created_via" = 'admin' AND u."password_hash" IS NULL
  AND EXISTS (SELECT 1 FROM "events" e WHERE e."action" = 'user.create' AND e."object_id" = u."id"::text AND e."actor_type" = 'system' AND e."actor_label" = 'oidc');
--> statement-breakpoint
UPDATE "users" u SET "created_via" = 'seed'
WHERE u."created_via" = 'admin'
  AND EXISTS (SELECT 1 FROM "events" e WHERE e."action" = 'user.create' AND e."object_id" = u."id"::text AND e."actor_type" = 'system' AND e."actor_label" = 'seed');
--> statement-breakpoint
UPDATE "users" SET "email_verified_at" = "created_at", "email_verified_by" = "created_via" WHERE "created_via" <> 'invitation';
--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_created_via" CHECK ("created_via" in ('admin', 'seed', 'oidc', 'invitation'));
--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_email_verified_by" CHECK ("email_verified_by" in ('admin', 'seed', 'oidc', 'invitation-mail'));
--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_email_verified" CHECK (("email_verified_at" IS NULL) = ("email_verified_by" IS NULL));
--> statement-breakpoint
ALTER TABLE "invitations" ADD COLUMN "mail_token_hash" text;
--> statement-breakpoint
ALTER TABLE "invitations" ADD COLUMN "mailed_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "invitations" ADD CONSTRAINT "invitations_mail_token_hash_unique" UNIQUE("mail_token_hash");
