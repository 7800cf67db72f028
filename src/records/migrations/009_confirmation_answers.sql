-- A callback's confirmation (the status query, a local activity) runs again when its workflow task is tried again: a
-- signal that arrives as the payment completes makes Temporal refuse that completion. The first final answer about a
-- transaction in a run is kept here, so the second try settles the payment as the first did (same outcome, same record,
-- same notification ids) even when the provider has changed its mind in between. `transaction_id` is '' for a query by
-- our reference.
CREATE TABLE confirmation_answers (
  payment_id text NOT NULL,
  run_id text NOT NULL,
  transaction_id text NOT NULL,
  answer jsonb NOT NULL,
  answered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (payment_id, run_id, transaction_id)
);
