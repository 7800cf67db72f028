-- Merchants' notifications, a transactional outbox: an event is written in the transaction that records the change it
-- tells of, so a record and its notification never disagree. The worker's relay delivers them (docs/records.md).

CREATE TABLE notification_events (
  id               text PRIMARY KEY,             -- evt_…, the same on every attempt (merchants deduplicate by it)
  seq              bigserial NOT NULL UNIQUE,    -- insertion order: a subject's events are delivered in it
  merchant_id      text NOT NULL,
  type             text NOT NULL,
  subject          text NOT NULL,                -- the payment or batch the event is about
  body             json NOT NULL,                -- the event as delivered (NotificationEvent), verbatim
  created_at       timestamptz NOT NULL,
  status           text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'delivering', 'delivered', 'failed', 'stopped')),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT now(),
  lease_until      timestamptz,                  -- while delivering: past it, another relay may take the event
  first_attempt_at timestamptz,                  -- the retry window runs from here (a replay starts it again)
  finished_at      timestamptz,
  last_error       text,
  replays          integer NOT NULL DEFAULT 0
);
CREATE INDEX notification_events_due ON notification_events (next_attempt_at) WHERE status IN ('pending', 'delivering');
CREATE INDEX notification_events_open ON notification_events (subject, seq) WHERE status IN ('pending', 'delivering');
CREATE INDEX notification_events_by_merchant ON notification_events (merchant_id, created_at DESC, id DESC);
CREATE INDEX notification_events_by_subject ON notification_events (subject, created_at DESC, id DESC);

-- Every delivery attempt: when, how long, what the merchant answered (or why nothing was answered).
CREATE TABLE notification_attempts (
  event_id    text NOT NULL REFERENCES notification_events (id) ON DELETE CASCADE,
  attempt     integer NOT NULL,
  at          timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  error       text,
  PRIMARY KEY (event_id, attempt)
);
