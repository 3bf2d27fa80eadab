ALTER TABLE "kube_namespaces" DROP COLUMN "resource_version";--> statement-breakpoint
ALTER TABLE "kube_objects" DROP COLUMN "resource_version";--> statement-breakpoint
DROP SEQUENCE "public"."kube_resource_version";--> statement-breakpoint
CREATE PUBLICATION "meridian_feed" FOR TABLE "networks", "ip_pools", "ip_claims", "ip_allocations", "pod_leases", "clusters", "kube_objects", "kube_namespaces", "allowance_buckets", "resource_grants", "resource_claims", "quota_increase_requests", "machines", "machine_allocations", "provider_operations", "machine_capacity", "invitations", "memberships", "projects", "resource_registrations", "grant_creation_policies", "claim_creation_policies", "capacity_alert_rules", "webhook_endpoints", "installations";--> statement-breakpoint
ALTER TABLE "networks" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "ip_claims" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "ip_allocations" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "pod_leases" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "clusters" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "kube_objects" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "kube_namespaces" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "allowance_buckets" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "resource_grants" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "resource_claims" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "quota_increase_requests" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "machines" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "machine_allocations" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "provider_operations" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "machine_capacity" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "invitations" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "memberships" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "projects" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "resource_registrations" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "grant_creation_policies" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "claim_creation_policies" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "capacity_alert_rules" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" REPLICA IDENTITY FULL;--> statement-breakpoint
ALTER TABLE "installations" REPLICA IDENTITY FULL;
