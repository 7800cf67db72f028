-- The initiation runs as a local activity, inside a workflow task: a worker that dies mid-call has that task tried
-- again, and the initiation with it, in the same run. Each execution claims as itself, so the second one finds the
-- first's claim and reconciles instead of sending again (claims taken before this column are the run's alone).
ALTER TABLE initiation_claims ADD COLUMN execution text NOT NULL DEFAULT '';
