-- One provider transaction settles at most one payment (docs/security.md): the initiation binds the transaction id the
-- provider acknowledged to its payment, and so does a status answer that names one; a transaction already bound to
-- another payment is refused, so a copied acknowledgement or status answer cannot settle a second payment.
CREATE TABLE provider_transactions (
  transaction_id text PRIMARY KEY,
  payment_id     text NOT NULL,
  bound_at       timestamptz NOT NULL DEFAULT now()
);
