-- Merchants, their API keys and their notification endpoints, as data (docs/merchants.md): operators add merchants and
-- roll or revoke keys, merchants manage their endpoints, and every server and relay sees a change without a restart.

CREATE TABLE merchants (
  id         text PRIMARY KEY CHECK (id ~ '^[a-z0-9]{1,32}$'),
  name       text,
  -- 'env': recorded at a server's start from MERCHANT_API_KEYS (its keys stay in the environment); 'api': added here.
  source     text NOT NULL DEFAULT 'api' CHECK (source IN ('api', 'env')),
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A key is `mk_{id}_{secret}`; only the SHA-256 of the whole key is kept, and the id finds it. It works until
-- expires_at (a rolled key's overlap) or revoked_at, whichever comes first.
CREATE TABLE api_keys (
  id          text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  digest      bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  revoked_at  timestamptz
);
CREATE INDEX api_keys_by_merchant ON api_keys (merchant_id, created_at DESC);

-- Where a merchant's notifications go: the event types it takes (null: every type), enabled or disabled.
CREATE TABLE webhook_endpoints (
  id          text PRIMARY KEY,
  merchant_id text NOT NULL REFERENCES merchants (id),
  url         text NOT NULL,
  event_types text[],
  status      text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_by_merchant ON webhook_endpoints (merchant_id, created_at);

-- The secrets that sign an endpoint's notifications: every one not yet expired signs (a rolled secret's overlap).
-- Kept as they are: an HMAC needs the secret itself.
CREATE TABLE webhook_endpoint_secrets (
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  secret      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz
);
CREATE INDEX webhook_endpoint_secrets_by_endpoint ON webhook_endpoint_secrets (endpoint_id);
