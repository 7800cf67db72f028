import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { request } from 'undici';
import type { BatchProgress } from '../src/domain/batch-model';
import { BATCH_REPORT_COLUMNS } from '../src/domain/export-columns';
import { batchItemPaymentId, batchWorkflowId } from '../src/domain/ids';
import type { PaymentResource } from '../src/domain/payment-model';
import { MAX_LISTED_ERRORS, UPLOAD_CSV_COLUMNS } from '../src/http/batch-upload';
import { sampleBatchItems } from '../src/local/sample-requests';
import { openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { waitForBatch } from './support/batch-helpers';
import { assertDocumented } from './support/openapi-checks';
import { uniqueReference } from './support/request-builders';
import { MERCHANT_KEY, OPERATOR_KEY, OTHER_MERCHANT_KEY, startStack, testDatabaseUrl } from './support/test-stack';
import type { Stack } from './support/test-stack';

// Payout batches uploaded as files (CSV, JSON lines): every line checked before anything starts, a 400 naming each
// bad line and column, a 413 past the upload limit; and the outcome report (report.csv), every item in upload order.

interface ErrorBody {
  error: { code: string; message: string; fields: { path: string; message: string }[] };
}

type Item = ReturnType<typeof sampleBatchItems>[number];

const MB = 1024 * 1024;
/** The upload limit (BATCH_UPLOAD_LIMIT_BYTES), smaller than its default so that the 413 tests send little. */
const UPLOAD_LIMIT = 8 * MB;
const HEADER = UPLOAD_CSV_COLUMNS.map(({ name }) => name);

let stack: Stack;
let db: Database;
before(async () => {
  stack = await startStack({ env: { BATCH_CONCURRENCY: '2', BATCH_UPLOAD_LIMIT_BYTES: String(UPLOAD_LIMIT) } });
  db = openDatabase(testDatabaseUrl(), { max: 2 });
});
after(async () => {
  await db?.end();
  await stack?.close();
});

function csvOf(items: readonly Item[], header: readonly string[] = HEADER): string {
  const cell = (value: string | number | undefined) => (value === undefined ? '' : String(value));
  return [header.join(','), ...items.map((item) => header.map((name) => cell(item[name as keyof Item])).join(','))]
    .map((line) => `${line}\r\n`)
    .join('');
}

function jsonLinesOf(items: readonly unknown[]): string {
  return items.map((item) => `${JSON.stringify(item)}\n`).join('');
}

/** POSTs a file upload, checking the answer against the OpenAPI document. */
async function upload<T = BatchProgress>(
  reference: string | undefined,
  body: string,
  contentType: string,
  key = MERCHANT_KEY,
) {
  const path = `/v1/payout-batches${reference === undefined ? '' : `?reference=${encodeURIComponent(reference)}`}`;
  const response = await request(`${stack.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
    body,
  });
  const answer = { status: response.statusCode, headers: response.headers, body: (await response.body.json()) as T };
  assertDocumented('POST', path, answer);
  return answer;
}

/** What a refused upload left behind: no batch record, no payment, no item row, no reference taken. */
async function assertNothingStarted(reference: string): Promise<void> {
  const batchId = batchWorkflowId('acme', reference);
  const counts = await db.query<{ batches: string; payments: string; items: string; keys: string }>(
    `SELECT (SELECT count(*) FROM batches WHERE id = $1) AS batches,
            (SELECT count(*) FROM payments WHERE batch_id = $1) AS payments,
            (SELECT count(*) FROM batch_items WHERE batch_id = $1) AS items,
            (SELECT count(*) FROM idempotency_keys WHERE scope = 'batch' AND reference = $2) AS keys`,
    [batchId, reference],
  );
  assert.deepEqual(counts.rows[0], { batches: '0', payments: '0', items: '0', keys: '0' });
  const shown = await stack.api('GET', `/v1/payout-batches/${batchId}`, undefined, OPERATOR_KEY);
  assert.equal(shown.status, 404);
}

/** The batch's report, checked against the OpenAPI document, as records by column name. */
async function report(batchId: string): Promise<Record<string, string>[]> {
  const path = `/v1/payout-batches/${batchId}/report.csv`;
  const response = await request(`${stack.baseUrl}${path}`, { headers: { authorization: `Bearer ${MERCHANT_KEY}` } });
  const text = await response.body.text();
  assertDocumented('GET', path, { status: response.statusCode, headers: response.headers, body: text });
  assert.equal(response.statusCode, 200, text);
  assert.equal(response.headers['content-disposition'], `attachment; filename="${batchId}-report.csv"`);
  const records: string[][] = parse(text, { record_delimiter: '\r\n' });
  const header = records.shift();
  assert.deepEqual(
    header,
    BATCH_REPORT_COLUMNS.map(({ name }) => name),
  );
  return records.map((fields) => Object.fromEntries((header ?? []).map((name, i) => [name, fields[i] ?? ''])));
}

/** Each report line agrees with its payment as `GET /v1/payments/{id}` shows it, or says it never started. */
async function assertReportMatches(lines: Record<string, string>[], items: readonly Item[], reference: string) {
  assert.equal(lines.length, items.length, 'every item, one line each');
  for (const [index, item] of items.entries()) {
    const line = lines[index] ?? {};
    const paymentId = batchItemPaymentId('acme', reference, item.reference);
    assert.equal(line.position, String(index + 1), 'in upload order');
    assert.equal(line.reference, item.reference);
    assert.equal(line.amount, item.amount.toFixed(2));
    assert.equal(line.payment_id, paymentId);
    const payment = await stack.api<PaymentResource>('GET', `/v1/payments/${paymentId}`);
    if (line.status === 'not_started') {
      assert.equal(payment.status, 404, `${paymentId} is not a payment`);
      assert.deepEqual([line.provider_transaction_id, line.failure_code, line.failure_message], ['', '', '']);
      continue;
    }
    assert.equal(payment.status, 200);
    assert.equal(line.status, payment.body.status);
    assert.equal(line.provider_transaction_id, payment.body.provider?.transaction_id ?? '');
    assert.equal(line.failure_code, payment.body.failure?.code ?? '');
    assert.equal(line.failure_message, payment.body.failure?.message ?? '');
  }
}

describe('a CSV batch', () => {
  it('runs, and its report lists every item with its outcome, in upload order', async () => {
    const reference = uniqueReference('csv');
    const items = sampleBatchItems(6, ['00', '11']).map((item, i) => ({
      ...item,
      // A quoted field with a comma: the CSV is read as RFC 4180, not split on commas.
      ...(i === 0 ? { customer_name: '"Boateng, Kofi"' } : {}),
    }));
    const text = `\uFEFF${csvOf(items)}`;
    const created = await upload(reference, text, 'text/csv; charset=utf-8');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.total.count, 6);
    assert.equal(created.body.reference, reference);
    const done = await waitForBatch(stack, created.body.id, (b) => b.status === 'completed');
    assert.equal(done.items.succeeded.count, 3);
    assert.equal(done.items.failed.count, 3);

    // The same file again is the same batch.
    const again = await upload(reference, text, 'text/csv');
    assert.equal(again.status, 200);
    assert.equal(again.body.id, created.body.id);

    const lines = await report(created.body.id);
    await assertReportMatches(lines, items, reference);
    assert.deepEqual(
      lines.map((line) => line.status),
      ['succeeded', 'failed', 'succeeded', 'failed', 'succeeded', 'failed'],
    );
    assert.ok(lines.every((line) => line.provider_transaction_id !== ''));
    assert.ok(lines.filter((line) => line.status === 'failed').every((line) => line.failure_code !== ''));
  });

  it('with bad rows answers 400 naming each line and column, and starts nothing; the fixed file then runs', async () => {
    const reference = uniqueReference('csv-bad');
    const items = sampleBatchItems(7);
    const rows = csvOf(items).split('\r\n');
    rows[2] = rows[2]?.replace(',11,', ',0,') ?? ''; // line 3: item-00002's amount
    rows[3] = rows[3]?.replace('12340002', '1234 0002') ?? ''; // line 4: an account number with a space
    rows[4] = `${rows[4] ?? ''},extra`; // line 5: a field too many
    rows[5] = rows[5]?.replace('item-00005', 'item-00001') ?? ''; // line 6: a repeated reference
    rows[6] = rows[6]?.replace(',15,', ',15.5.0,') ?? ''; // line 7: not a number
    const response = await upload<ErrorBody>(reference, rows.join('\r\n'), 'text/csv');
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, 'invalid_request');
    assert.equal(response.body.error.message, 'the batch is invalid: 5 errors');
    assert.deepEqual(response.body.error.fields, [
      { path: 'line 3, column amount', message: 'must be at least 0.01' },
      { path: 'line 4, column account_number', message: 'must be 4–34 letters or digits' },
      { path: 'line 5', message: 'has 7 fields; the header row has 6' },
      { path: 'line 6, column reference', message: 'repeats line 2' },
      { path: 'line 7, column amount', message: 'must be a number such as 250.00' },
    ]);
    await assertNothingStarted(reference);

    const fixed = await upload(reference, csvOf(items), 'text/csv');
    assert.equal(fixed.status, 201, JSON.stringify(fixed.body));
    assert.equal(fixed.body.total.count, 7);
  });

  it('names a header row that is not the documented one, on line 1', async () => {
    const reference = uniqueReference('csv-header');
    const header = ['ref', 'amount', 'customer_name', 'bank_code', 'account_number', 'amount'];
    const response = await upload<ErrorBody>(reference, csvOf(sampleBatchItems(2), header), 'text/csv');
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.error.fields, [
      { path: 'line 1, column ref', message: 'is not a known column' },
      { path: 'line 1, column amount', message: 'is named twice' },
      { path: 'line 1, column reference', message: 'is missing from the header row' },
    ]);
    const empty = await upload<ErrorBody>(reference, '', 'text/csv');
    assert.equal(empty.status, 400);
    assert.deepEqual(empty.body.error.fields, [
      { path: 'line 1', message: 'must be the header row naming the columns' },
    ]);
    const noReference = await upload<ErrorBody>(undefined, csvOf(sampleBatchItems(1)), 'text/csv');
    assert.equal(noReference.status, 400);
    assert.deepEqual(
      noReference.body.error.fields.map((f) => f.path),
      ['query.reference'],
    );
    await assertNothingStarted(reference);
  });

  it('names the line of a bank the provider does not list, and starts nothing', async () => {
    const reference = uniqueReference('csv-bank');
    const items = sampleBatchItems(3).map((item, i) => (i === 1 ? { ...item, bank_code: 'XX999999' } : item));
    const response = await upload<ErrorBody>(reference, csvOf(items), 'text/csv');
    assert.equal(response.status, 400);
    assert.equal(response.body.error.message, 'the batch is invalid: 1 error');
    assert.deepEqual(response.body.error.fields, [
      { path: 'line 3, column bank_code', message: '"XX999999" is not a bank the provider supports' },
    ]);
    const lines = await upload<ErrorBody>(reference, jsonLinesOf(items), 'application/x-ndjson');
    assert.deepEqual(
      lines.body.error.fields.map((f) => f.path),
      ['line 2, field bank_code'],
    );
    await assertNothingStarted(reference);
  });

  it(`lists the first ${MAX_LISTED_ERRORS} errors and says how many in all`, async () => {
    const reference = uniqueReference('csv-many');
    const items = sampleBatchItems(150).map((item) => ({ ...item, bank_code: 'no!' }));
    const response = await upload<ErrorBody>(reference, csvOf(items), 'text/csv');
    assert.equal(response.status, 400);
    assert.equal(
      response.body.error.message,
      `the batch is invalid: 150 errors; the first ${MAX_LISTED_ERRORS} are listed`,
    );
    assert.equal(response.body.error.fields.length, MAX_LISTED_ERRORS);
    assert.deepEqual(response.body.error.fields[0], {
      path: 'line 2, column bank_code',
      message: 'must be 2–20 letters or digits',
    });
    assert.equal(response.body.error.fields.at(-1)?.path, `line ${MAX_LISTED_ERRORS + 1}, column bank_code`);
    await assertNothingStarted(reference);
  });

  it('is refused 413 past the upload limit, declared or streamed', async () => {
    const declared = await answerTo(true);
    assert.match(declared, /^HTTP\/1\.1 413 /);
    const streamed = await answerTo(false);
    assert.match(streamed, /^HTTP\/1\.1 413 /);
  });

  it('is refused 415 in another encoding than UTF-8', async () => {
    const response = await upload<ErrorBody>(
      uniqueReference('csv-latin1'),
      csvOf(sampleBatchItems(1)),
      'text/csv; charset=ISO-8859-1',
    );
    assert.equal(response.status, 415);
    assert.equal(response.body.error.message, 'send the file in UTF-8');
  });

  it('is a merchant key’s to send: an operator key is refused before the file is read', async () => {
    const response = await upload<ErrorBody>(
      uniqueReference('csv-op'),
      csvOf(sampleBatchItems(1)),
      'text/csv',
      OPERATOR_KEY,
    );
    assert.equal(response.status, 403);
  });
});

describe('a JSON-lines batch', () => {
  it('runs', async () => {
    const reference = uniqueReference('ndjson');
    const items = sampleBatchItems(3);
    const created = await upload(reference, `\n${jsonLinesOf(items)}\n`, 'application/x-ndjson');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.total.count, 3);
    const done = await waitForBatch(stack, created.body.id, (b) => b.status === 'completed');
    assert.equal(done.items.succeeded.count, 3);
  });

  it('with bad lines answers 400 naming each line and field, and starts nothing', async () => {
    const reference = uniqueReference('ndjson-bad');
    const [a, b, c, d] = sampleBatchItems(4);
    const text = [
      JSON.stringify(a),
      '{"reference": "item-x", "amount": ',
      JSON.stringify({ ...b, iban: 'GB00' }),
      '',
      JSON.stringify([c]),
      JSON.stringify({ ...d, amount: 0 }),
    ].join('\r\n');
    const response = await upload<ErrorBody>(reference, text, 'application/x-ndjson');
    assert.equal(response.status, 400);
    assert.equal(response.body.error.message, 'the batch is invalid: 4 errors');
    assert.deepEqual(
      response.body.error.fields.map((f) => f.path),
      ['line 2', 'line 3, field iban', 'line 5', 'line 6, field amount'],
    );
    assert.equal(response.body.error.fields[0]?.message, 'is not valid JSON');
    assert.equal(response.body.error.fields[1]?.message, 'is not a known field');
    await assertNothingStarted(reference);
  });
});

describe('a JSON batch', () => {
  it('refuses a reference in the query other than its own', async () => {
    const reference = uniqueReference('json');
    const body = { reference, items: sampleBatchItems(1) };
    const response = await stack.api<ErrorBody>('POST', `/v1/payout-batches?reference=${reference}-other`, body);
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.error.fields, [
      { path: 'query.reference', message: "differs from the body's reference" },
    ]);
    await assertNothingStarted(reference);
  });
});

describe('the report of a cancelled batch', () => {
  it('lists the items it never started as not_started', async () => {
    const reference = uniqueReference('csv-cancel');
    const items = sampleBatchItems(30);
    const created = await upload(reference, csvOf(items), 'text/csv');
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const cancelled = await stack.api<BatchProgress>('POST', `/v1/payout-batches/${created.body.id}/cancel`);
    assert.equal(cancelled.status, 200, JSON.stringify(cancelled.body));
    const done = await waitForBatch(stack, created.body.id, (b) => b.status === 'cancelled');
    const lines = await report(created.body.id);
    await assertReportMatches(lines, items, reference);
    const notStarted = lines.filter((line) => line.status === 'not_started').length;
    assert.ok(notStarted > 0, 'a batch cancelled at once leaves items unstarted');
    assert.equal(notStarted, done.items.not_started.count);
  });

  it("is 404 for an unknown batch and for another merchant's", async () => {
    const reference = uniqueReference('csv-own');
    const created = await upload(reference, csvOf(sampleBatchItems(1)), 'text/csv');
    assert.equal(created.status, 201);
    for (const [id, key] of [
      [batchWorkflowId('acme', uniqueReference('no-such')), MERCHANT_KEY],
      [created.body.id, OTHER_MERCHANT_KEY],
    ] as const) {
      const path = `/v1/payout-batches/${id}/report.csv`;
      const response = await request(`${stack.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await response.body.json()) as ErrorBody;
      assertDocumented('GET', path, { status: response.statusCode, headers: response.headers, body });
      assert.equal(response.statusCode, 404);
      assert.equal(body.error.code, 'not_found');
    }
  });
});

/**
 * Starts a CSV upload past the 8 MiB limit on a raw socket, its size declared in `content-length` (then sends nothing
 * more) or chunked (then sends just past the limit and waits), and answers the status line of what the server said.
 */
async function answerTo(declare: boolean): Promise<string> {
  const { hostname, port } = new URL(stack.baseUrl);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {
    // A reset after the answer: the status line, or its absence, says what happened.
  });
  const answer = new Promise<string>((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1').split('\r\n')[0] ?? ''));
    socket.once('close', () => resolve('closed without an answer'));
  });
  const head = [
    `POST /v1/payout-batches?reference=${uniqueReference('too-big')} HTTP/1.1`,
    `host: ${hostname}:${port}`,
    'content-type: text/csv',
    `authorization: Bearer ${MERCHANT_KEY}`,
    declare ? `content-length: ${UPLOAD_LIMIT + 1}` : 'transfer-encoding: chunked',
  ];
  try {
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    if (!declare) {
      // Just past the limit, and no more: the server reads all of it, so its close cannot reset the answer away.
      const chunk = (text: string) =>
        new Promise((resolve) => socket.write(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`, resolve));
      const rows = csvOf(sampleBatchItems(10_000));
      let sent = 0;
      for (; sent + rows.length <= UPLOAD_LIMIT; sent += rows.length) await chunk(rows);
      await chunk(rows.slice(0, UPLOAD_LIMIT - sent));
      await chunk(csvOf(sampleBatchItems(10)).slice(0, 1024));
    }
    return await answer;
  } finally {
    socket.destroy();
  }
}
