import assert from 'node:assert/strict';
import { get } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { BatchProgress } from '../src/domain/batch-model';
import { PAYMENT_EXPORT_COLUMNS } from '../src/domain/export-columns';
import type { PaymentResource } from '../src/domain/payment-model';
import { csvField, csvRecord } from '../src/http/csv-encoding';
import { inTransaction, openDatabase } from '../src/records/database';
import type { Database } from '../src/records/database';
import { streamPaymentRows } from '../src/records/record-exports';
import { upsertBatchRecord, upsertPaymentRecord } from '../src/records/record-writes';
import { assertDocumented } from './support/openapi-checks';
import { paymentRequest } from './support/request-builders';
import { MERCHANT_KEY, OPERATOR_KEY, OTHER_MERCHANT_KEY, startStack, testDatabaseUrl } from './support/test-stack';
import type { Stack } from './support/test-stack';

// The CSV exports: the same payments as the JSON API, filtered by creation range, a merchant's own only, escaped for
// spreadsheets, and a 10,000-item batch report streamed in one request without the server's memory growing with it.

const HEADER = PAYMENT_EXPORT_COLUMNS.map(({ name }) => name);

/** Parses RFC 4180 text: records of fields (quoted fields may hold commas, quotes and line ends). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field + fields.join(''), '', 'the text ends with CRLF');
  return records;
}

/** The file's records as objects by header name, the header checked. */
function rowsOf(text: string): Record<string, string>[] {
  const [header, ...records] = parseCsv(text);
  assert.deepEqual(header, HEADER);
  return records.map((fields) => {
    assert.equal(fields.length, HEADER.length);
    return Object.fromEntries(HEADER.map((name, i) => [name, fields[i] ?? '']));
  });
}

describe('CSV fields', () => {
  it('quotes a field with a comma, quote, CR or LF, doubling its quotes; leaves others as they are', () => {
    assert.equal(csvField('order-1001'), 'order-1001');
    assert.equal(csvField('12.50'), '12.50');
    assert.equal(csvField(null), '');
    assert.equal(csvField(''), '');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\nlines'), '"two\nlines"');
    assert.equal(csvField('a\r\nb'), '"a\r\nb"');
    assert.equal(csvRecord(['a', null, 'b,c']), 'a,,"b,c"\r\n');
  });

  it("puts a ' before a field a spreadsheet would run as a formula", () => {
    assert.equal(csvField('=1+1'), "'=1+1");
    assert.equal(csvField('+233241234567'), "'+233241234567");
    assert.equal(csvField('-2'), "'-2");
    assert.equal(csvField('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvField('\tx'), "'\tx");
    assert.equal(csvField('\r=x'), `"'\r=x"`);
    assert.equal(csvField('=HYPERLINK("http://x","y")'), `"'=HYPERLINK(""http://x"",""y"")"`);
    assert.equal(csvField('a=b'), 'a=b', 'only the first character counts');
    assert.equal(parseCsv(csvRecord(['=cmd|"/c calc"!A1', 'x']))[0]?.[0], `'=cmd|"/c calc"!A1`);
  });
});

/** A payment record as a workflow writes it. */
function resource(id: string, reference: string, fields: Partial<PaymentResource> = {}): PaymentResource {
  return {
    id,
    type: 'bank_credit',
    reference,
    status: 'succeeded',
    amount: 12.5,
    created_at: '2026-02-01T10:00:00.000Z',
    updated_at: '2026-02-01T10:00:05.000Z',
    provider: { transaction_id: `tx-${reference}`, status_code: '1', message: 'Approved' },
    next_action: null,
    failure: null,
    events: [],
    ...fields,
  };
}

describe('the records export stream', () => {
  let db: Database;
  const merchant = `m${randomBytes(5).toString('hex')}`;
  before(async () => {
    db = openDatabase(testDatabaseUrl(), { max: 2 });
    await inTransaction(db, async (client) => {
      for (let n = 0; n < 1200; n++) {
        const at = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
        await upsertPaymentRecord(client, {
          resource: resource(`payment-${merchant}-r${n}`, `r${n}`, { created_at: at, updated_at: at }),
          merchantId: merchant,
          revision: 1,
          recordedAt: at,
        });
      }
    });
  });
  after(() => db?.end());

  it('reads oldest first with the amount as stored, and gives its connection back at the end', async () => {
    const rows: unknown[][] = [];
    for await (const row of await streamPaymentRows(db, { merchantId: merchant })) rows.push(row as unknown[]);
    assert.equal(rows.length, 1200);
    assert.deepEqual(rows[0]?.slice(0, 7), [
      `payment-${merchant}-r0`,
      'r0',
      'bank_credit',
      'succeeded',
      '12.50',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
    ]);
    assert.equal(rows.at(-1)?.[1], 'r1199');
    assert.equal(db.totalCount - db.idleCount, 0, 'no connection held');
  });

  it('gives its connection back, usable, when its reader stops early', async () => {
    for (let i = 0; i < 3; i++) {
      const rows = await streamPaymentRows(db, { merchantId: merchant });
      for await (const _row of rows) break;
      await new Promise((resolve) => (rows.closed ? resolve(undefined) : rows.once('close', resolve)));
      assert.equal(db.totalCount - db.idleCount, 0, 'no connection held');
    }
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM payments WHERE merchant_id = $1', [
      merchant,
    ]);
    assert.equal(rows[0]?.n, '1200');
  });
});

describe('CSV exports over HTTP', () => {
  // A merchant of its own: an export lists every payment of its merchant in a range, and other files' batches add
  // acme's payments at any time (an item's creation time comes before its record's commit).
  const MERCHANT = 'exports';
  let stack: Stack;
  let db: Database;
  before(async () => {
    stack = await startStack({
      env: { MERCHANT_API_KEYS: `${MERCHANT}:${MERCHANT_KEY},other:${OTHER_MERCHANT_KEY}` },
    });
    db = openDatabase(testDatabaseUrl());
  });
  after(async () => {
    await db?.end();
    await stack?.close();
  });

  /** GETs an export as text, checking the answer against the OpenAPI document. */
  async function csv(path: string, key = MERCHANT_KEY) {
    const response = await request(`${stack.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    const text = await response.body.text();
    const json = String(response.headers['content-type']).startsWith('application/json');
    const answer = {
      status: response.statusCode,
      headers: response.headers,
      body: json ? (JSON.parse(text) as unknown) : text,
    };
    assertDocumented('GET', path, answer);
    return { ...answer, text };
  }

  it('answers what the JSON API answers for real payments, oldest first, as an attachment', async () => {
    const bodies = [
      paymentRequest('mobile_money_debit', '00'),
      paymentRequest('mobile_money_debit', '11'),
      paymentRequest('bank_credit', '00'),
    ];
    const ids: string[] = [];
    for (const body of bodies) {
      const created = await stack.api('POST', '/v1/payments', body);
      assert.ok([200, 201].includes(created.status), JSON.stringify(created.body));
      ids.push(created.body.id);
    }
    const shown = await Promise.all(ids.map((id) => stack.waitForStatus(id, ['succeeded', 'failed'])));
    const from = shown[0]?.created_at ?? '';
    const until = new Date(Date.parse(shown[2]?.created_at ?? '') + 1).toISOString();
    const range = `created[gte]=${encodeURIComponent(from)}&created[lt]=${encodeURIComponent(until)}`;
    const answer = await csv(`/v1/payments.csv?${range}`);
    assert.equal(answer.status, 200, answer.text);
    assert.match(String(answer.headers['content-type']), /^text\/csv; charset=utf-8/);
    assert.equal(answer.headers['content-disposition'], 'attachment; filename="payments.csv"');
    const rows = rowsOf(answer.text).filter((row) => ids.includes(row.id ?? ''));
    assert.deepEqual(
      rows.map((row) => row.id),
      ids,
    );
    for (const [i, row] of rows.entries()) {
      const json = shown[i];
      assert.ok(json);
      assert.deepEqual(row, {
        id: json.id,
        reference: json.reference,
        type: json.type,
        status: json.status,
        amount: json.amount.toFixed(2),
        created_at: json.created_at,
        updated_at: json.updated_at,
        provider_transaction_id: json.provider.transaction_id ?? '',
        failure_code: json.failure?.code ?? '',
        failure_message: json.failure?.message ?? '',
        batch_id: '',
      });
    }
    assert.equal(shown[1]?.status, 'failed');
    assert.notEqual(rows[1]?.failure_code, '');
    // The JSON list with the same filters holds the same payments.
    const listed = await stack.api<{ data: { id: string }[] }>('GET', `/v1/payments?${range}&limit=100`);
    assert.deepEqual(
      listed.body.data.map((p) => p.id).reverse(),
      rowsOf(answer.text).map((row) => row.id),
    );
  });

  it('keeps to the creation range [gte, lt) and the other filters', async () => {
    const merchantRows = async (query: string) =>
      rowsOf((await csv(`/v1/payments.csv?${query}`)).text).map((row) => row.reference);
    const base = Date.UTC(2025, 5, 1);
    const at = (s: number) => new Date(base + s * 1000).toISOString();
    for (let n = 0; n < 4; n++) {
      await upsertPaymentRecord(db, {
        resource: resource(`payment-${MERCHANT}-range-${n}`, `range-${n}`, {
          created_at: at(n * 10),
          status: n === 2 ? 'failed' : 'succeeded',
        }),
        merchantId: MERCHANT,
        revision: 1,
        recordedAt: at(n * 10),
      });
    }
    const q = (from: number, before: number) =>
      `created[gte]=${encodeURIComponent(at(from))}&created[lt]=${encodeURIComponent(at(before))}`;
    assert.deepEqual(await merchantRows(q(0, 40)), ['range-0', 'range-1', 'range-2', 'range-3']);
    assert.deepEqual(await merchantRows(q(10, 30)), ['range-1', 'range-2']);
    assert.deepEqual(await merchantRows(q(11, 30)), ['range-2']);
    assert.deepEqual(await merchantRows(`${q(0, 40)}&status=failed`), ['range-2']);
    assert.deepEqual(await merchantRows(`${q(0, 40)}&reference=range-3`), ['range-3']);
    assert.deepEqual(await merchantRows(`${q(0, 40)}&type=card_payment`), []);
    // Another merchant's export, and a filter naming this merchant's payments, find none of them.
    const other = await csv(`/v1/payments.csv?${q(0, 40)}`, OTHER_MERCHANT_KEY);
    assert.equal(other.status, 200);
    assert.deepEqual(rowsOf(other.text), []);
    const otherByReference = await csv(`/v1/payments.csv?reference=range-1`, OTHER_MERCHANT_KEY);
    assert.deepEqual(rowsOf(otherByReference.text), []);
    // An operator sees every merchant's.
    const all = rowsOf((await csv(`/v1/payments.csv?${q(0, 40)}`, OPERATOR_KEY)).text);
    assert.equal(all.length, 4);
    const bad = await csv('/v1/payments.csv?created[gte]=yesterday');
    assert.equal(bad.status, 400);
    const unknown = await csv('/v1/payments.csv?limit=5');
    assert.equal(unknown.status, 400, 'an export has no pages');
    const noKey = await request(`${stack.baseUrl}/v1/payments.csv`);
    assert.equal(noKey.statusCode, 401);
    await noKey.body.dump();
  });

  it("escapes fields and defuses formulas in a merchant's values", async () => {
    const id = `payment-${MERCHANT}-=formula`;
    await upsertPaymentRecord(db, {
      resource: resource(id, '-1', {
        status: 'failed',
        provider: { transaction_id: '@evil', status_code: '0', message: null },
        failure: { code: 'provider_declined', message: '=HYPERLINK("http://x","y"), then\r\nmore' },
      }),
      merchantId: MERCHANT,
      revision: 1,
      recordedAt: '2026-02-01T10:00:05.000Z',
    });
    const answer = await csv('/v1/payments.csv?reference=-1');
    assert.match(answer.text, /"'=HYPERLINK\(""http:\/\/x"",""y""\), then\r\nmore"/);
    const [row] = rowsOf(answer.text);
    assert.equal(row?.id, `payment-${MERCHANT}-=formula`, 'not at the start: left as it is');
    assert.equal(row?.reference, "'-1");
    assert.equal(row?.provider_transaction_id, "'@evil");
    assert.equal(row?.failure_message, `'=HYPERLINK("http://x","y"), then\r\nmore`);
  });

  it("answers 404 for a batch that does not exist or is another merchant's", async () => {
    const unknown = await csv(`/v1/payout-batches/batch-${MERCHANT}-no-such-batch/items.csv`);
    assert.equal(unknown.status, 404);
    const json = await stack.api('GET', `/v1/payout-batches/batch-${MERCHANT}-no-such-batch`);
    assert.equal(json.status, 404, 'as the JSON batch route answers');
    const others = await csv(`/v1/payout-batches/batch-${MERCHANT}-no-such-batch/items.csv`, OTHER_MERCHANT_KEY);
    assert.equal(others.status, 404);
  });

  it("streams a 10,000-item batch's report in one request, its memory bounded, its connection given back", async () => {
    const reference = `big-${randomBytes(4).toString('hex')}`;
    const batchId = `batch-${MERCHANT}-${reference}`;
    const createdAt = '2026-03-01T08:00:00.000Z';
    const tally = (count: number, amount: number) => ({ count, amount });
    const progress: BatchProgress = {
      id: batchId,
      reference,
      status: 'completed',
      concurrency: 50,
      created_at: createdAt,
      started_at: createdAt,
      finished_at: '2026-03-01T09:00:00.000Z',
      total: tally(10_000, 10_000 * 25),
      items: {
        not_started: tally(0, 0),
        in_flight: tally(0, 0),
        succeeded: tally(10_000, 10_000 * 25),
        failed: tally(0, 0),
        needs_review: tally(0, 0),
      },
      needs_review: [],
      not_started: null,
      paused_by: null,
      starts_at: null,
      approvals_required: 0,
      approvals: [],
      approval_expires_at: null,
    };
    await upsertBatchRecord(db, {
      resource: progress,
      merchantId: MERCHANT,
      reference,
      revision: 1,
      recordedAt: createdAt,
    });
    // Five transactions of 2,000 records: the rows a batch's items write, without running 10,000 workflows.
    for (let chunk = 0; chunk < 5; chunk++) {
      await inTransaction(db, async (client) => {
        for (let n = chunk * 2000; n < (chunk + 1) * 2000; n++) {
          const at = new Date(Date.parse(createdAt) + n * 10).toISOString();
          await upsertPaymentRecord(client, {
            resource: resource(`payment-${MERCHANT}-${reference}~emp-${n}`, `emp-${n}`, {
              amount: 25,
              created_at: at,
              updated_at: at,
            }),
            merchantId: MERCHANT,
            batchId,
            revision: 1,
            recordedAt: at,
          });
        }
      });
    }

    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    let rows = 0;
    let bytes = 0;
    let first = '';
    try {
      const response = await request(`${stack.baseUrl}/v1/payout-batches/${batchId}/items.csv`, {
        headers: { authorization: `Bearer ${MERCHANT_KEY}` },
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-disposition'], `attachment; filename="${batchId}-items.csv"`);
      assertDocumented('GET', `/v1/payout-batches/${batchId}/items.csv`, {
        status: 200,
        headers: response.headers,
        body: '',
      });
      // Counted as it arrives, never held whole here either.
      for await (const chunk of response.body) {
        const text = (chunk as Buffer).toString('utf8');
        if (first.length < 400) first += text.slice(0, 400);
        bytes += text.length;
        rows += text.split('\r\n').length - 1;
      }
    } finally {
      clearInterval(sampler);
    }
    assert.equal(rows, 10_001, 'the header and 10,000 items');
    assert.ok(bytes > 1_500_000, `${bytes} bytes`);
    assert.deepEqual(parseCsv(first.slice(0, first.indexOf('\r\n', first.indexOf('\r\n') + 2) + 2)), [
      HEADER,
      [
        `payment-${MERCHANT}-${reference}~emp-0`,
        'emp-0',
        'bank_credit',
        'succeeded',
        '25.00',
        createdAt,
        createdAt,
        'tx-emp-0',
        '',
        '',
        batchId,
      ],
    ]);
    // The whole process (sandbox, worker, server, and this reader) grew by less than a few times the file's size.
    const growth = peak - before;
    assert.ok(growth < 64 * 1024 * 1024, `RSS grew by ${Math.round(growth / 1024 / 1024)} MiB`);

    // A client that goes away mid-file: the server closes the cursor and gives the connection back.
    await new Promise<void>((resolve, reject) => {
      const url = new URL(`/v1/payout-batches/${batchId}/items.csv`, stack.baseUrl);
      const req = get(url, { headers: { authorization: `Bearer ${MERCHANT_KEY}` } }, (res: IncomingMessage) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    });
    const open = async () =>
      (
        await db.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity
           WHERE query LIKE '/* payments export */%' AND state <> 'idle' AND pid <> pg_backend_pid()`,
        )
      ).rows[0]?.n;
    const deadline = Date.now() + 10_000;
    while ((await open()) !== '0' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(await open(), '0', 'no export left open in PostgreSQL');
    // And the server still answers from the records.
    const again = await csv(`/v1/payments.csv?batch=${batchId}&reference=emp-9999`);
    assert.equal(rowsOf(again.text)[0]?.reference, 'emp-9999');
  });
});
