-- The initiation runs as a local activity, inside a workflow task: when Temporal loses that task's completion (a
-- restart, a worker that died after the call) the task runs again, and the initiation with it, in the same run. The
-- second execution finds the first's claim and never sends; the first's answer kept here lets it answer as the first
-- did (the same acknowledgement, the same rejection) instead of sending the payment to reconciliation. An execution
-- that died mid-call kept nothing: its outcome stays unknown.
CREATE TABLE initiation_answers (
  payment_id text PRIMARY KEY,
  run_id text NOT NULL,
  answer jsonb NOT NULL,
  answered_at timestamptz NOT NULL DEFAULT now()
);
