CREATE TYPE "public"."token_kind" AS ENUM('project', 'operator');--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "project_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "kind" "token_kind" DEFAULT 'project' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "user_id" uuid;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_user" ON "api_tokens" USING btree ("user_id") WHERE "api_tokens"."user_id" is not null;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_kind_scope" CHECK (("api_tokens"."kind" = 'project' and "api_tokens"."project_id" is not null and "api_tokens"."user_id" is null)
       or ("api_tokens"."kind" = 'operator' and "api_tokens"."project_id" is null and "api_tokens"."user_id" is not null and "api_tokens"."cluster_name" is null));