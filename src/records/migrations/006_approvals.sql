-- Operators' approvals and rejections of what waits for one (maker-checker, docs/records.md): who decided, what, when,
-- about which batch or payment. Written by the command layer once the workflow has counted the decision, in the
-- transaction of its operator action; an operator decides once per subject.
CREATE TABLE approvals (
  subject_id  text NOT NULL,                    -- the batch or payment id
  operator    text NOT NULL,
  decision    text NOT NULL CHECK (decision IN ('approve', 'reject')),
  at          timestamptz NOT NULL DEFAULT now(),
  merchant_id text,
  PRIMARY KEY (subject_id, operator)
);
CREATE INDEX approvals_by_operator ON approvals (operator, at DESC);
