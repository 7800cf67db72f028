-- A batch item's reference is unique within its batch only (it may repeat a standalone payment's or another batch's
-- item's); idempotency_keys holds the merchant's references. Unique per merchant stays for standalone payments.
ALTER TABLE payments DROP CONSTRAINT payments_merchant_id_reference_key;
CREATE UNIQUE INDEX payments_by_reference ON payments (merchant_id, reference) WHERE batch_id IS NULL;
CREATE INDEX payments_by_item_reference ON payments (merchant_id, reference) WHERE batch_id IS NOT NULL;
