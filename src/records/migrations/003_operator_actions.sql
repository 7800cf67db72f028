-- What operators did to payments and batches (docs/records.md): who, what, to which, why, and what it left. Written
-- by the command layer once Temporal has applied the action; never card or personal data in `detail`.
CREATE TABLE operator_actions (
  id          bigserial PRIMARY KEY,
  at          timestamptz NOT NULL DEFAULT now(),
  operator    text NOT NULL,                    -- the operator's name (the API key's person, or the CLI's --by)
  action      text NOT NULL,                    -- payment.resolve · batch.pause · batch.resume · batch.cancel · record.repair
  subject_id  text NOT NULL,                    -- the payment or batch id
  merchant_id text,                             -- whose subject; null when no record names it
  detail      json NOT NULL DEFAULT '{}',       -- the action's own words: the note and outcome of a resolution, …
  outcome     text NOT NULL                     -- what it left: the subject's status after it, or `repaired`
);
CREATE INDEX operator_actions_by_subject ON operator_actions (subject_id, at DESC, id DESC);
CREATE INDEX operator_actions_by_operator ON operator_actions (operator, at DESC, id DESC);

-- A purge (`records purge`) keeps the idempotency key of what it deleted, marked: a re-sent reference answers 409
-- `reference_purged` instead of creating a second payment.
ALTER TABLE idempotency_keys ADD COLUMN purged_at timestamptz;
