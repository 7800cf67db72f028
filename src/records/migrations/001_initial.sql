-- The system of record: what merchants read, idempotency keys and initiation claims (docs/records.md).
-- Money is numeric, never float. Records are upserted by (recorded_at, revision): a retried or late write never moves
-- one back, and a later run of the workflow (a Reset) supersedes the run it replaced. A resource is `json`, not
-- `jsonb`: the API answers it as the workflow built it, its fields in their documented order.

CREATE TABLE payments (
  id          text PRIMARY KEY,                 -- the payment id, which is also its workflow id
  merchant_id text NOT NULL,
  type        text NOT NULL,
  reference   text NOT NULL,
  status      text NOT NULL,
  amount      numeric(15, 2) NOT NULL,
  batch_id    text,
  resource    json NOT NULL,                    -- the API resource (PaymentResource) as last recorded, verbatim
  revision    integer NOT NULL,                 -- the workflow's count of recorded changes; 0 when the server created it
  recorded_at timestamptz NOT NULL DEFAULT '-infinity', -- the workflow's clock at the change; a later run (a Reset) wins
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
-- A merchant's references are unique in idempotency_keys; a batch item's only within its batch, so none here.
CREATE INDEX payments_by_reference ON payments (merchant_id, reference);
-- Keyset pagination: newest first by (created_at, id), per merchant and per batch.
CREATE INDEX payments_by_merchant ON payments (merchant_id, created_at DESC, id DESC);
CREATE INDEX payments_by_batch ON payments (batch_id, created_at DESC, id DESC) WHERE batch_id IS NOT NULL;
CREATE INDEX payments_by_status ON payments (status, created_at DESC, id DESC);

-- A merchant's reference, taken in a transaction before anything starts: the same body again answers the same
-- resource, another body is a conflict, forever, whatever Temporal has kept.
CREATE TABLE idempotency_keys (
  merchant_id text NOT NULL,
  scope       text NOT NULL CHECK (scope IN ('payment', 'batch')),
  reference   text NOT NULL,
  fingerprint text NOT NULL,
  resource_id text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (merchant_id, scope, reference)
);

-- One row per payment whose initiation went (or may have gone) to the provider: taken before the request leaves,
-- never released. A second run (Reset, restart) finds it and reconciles instead of sending again.
CREATE TABLE initiation_claims (
  payment_id  text PRIMARY KEY,
  run_id      text NOT NULL,
  claimed_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE batches (
  id          text PRIMARY KEY,
  merchant_id text NOT NULL,
  reference   text NOT NULL,
  status      text NOT NULL,
  resource    json NOT NULL,                    -- the API resource (BatchProgress) as last recorded, verbatim
  revision    integer NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT '-infinity',
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX batches_by_merchant ON batches (merchant_id, created_at DESC, id DESC);
