-- A chart reads one series' rows of one period in time order: the primary key carries the values
-- too (INCLUDE), so the read is an index-only scan over a few contiguous leaf pages instead of one
-- heap page per point (the sampler writes every series each minute, so one series' rows are spread
-- over the whole table). Same key: the sampler's ON CONFLICT (series_id, step, at) is unchanged.
ALTER TABLE "capacity_samples" DROP CONSTRAINT "capacity_samples_series_id_step_at_pk";--> statement-breakpoint
ALTER TABLE "capacity_samples" ADD CONSTRAINT "capacity_samples_series_id_step_at_pk" PRIMARY KEY ("series_id", "step", "at") INCLUDE ("used", "capacity");
