-- A payout batch's items, in upload order, as the server signed them: the batch workflow reads them a page at a time
-- (by position), so neither its input nor its history holds the whole batch. An item not yet started has a row here
-- and none in payments; once started, its payment's record is in payments.
CREATE TABLE batch_items (
  batch_id   text NOT NULL,
  position   integer NOT NULL,
  payment_id text NOT NULL UNIQUE,
  reference  text NOT NULL,
  amount     numeric(15, 2) NOT NULL,
  item       json NOT NULL,
  PRIMARY KEY (batch_id, position)
);
