import { pipeline } from 'node:stream';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { BATCH_REPORT_COLUMNS, PAYMENT_EXPORT_COLUMNS } from '../domain/export-columns';
import { isMerchantBatch } from '../domain/ids';
import { PAYMENT_STATUSES } from '../domain/payment-model';
import { AppError } from '../payments/app-errors';
import type { PaymentExports } from '../payments/payment-exports';
import type { Batches } from '../payments/payout-batches';
import type { Caller } from './auth';
import { csvEncoder, csvRecord } from './csv-encoding';
import { batchId, listQuery, paymentFilters, temporal, withKey } from './route-parts';
import { route } from './route-spec';

// CSV exports for a merchant's finance team: payments over a creation range, and a payout batch's items, streamed
// from the records in constant memory, oldest first.

export interface ExportRouteDeps {
  exports: PaymentExports;
  batches: Batches;
}

type Columns = readonly { name: string; description: string }[];

const HEADER = PAYMENT_EXPORT_COLUMNS.map(({ name }) => name);
const REPORT_HEADER = BATCH_REPORT_COLUMNS.map(({ name }) => name);

const csvAnswer = (
  what: string,
  filename: string,
  exampleRows: (string | null)[][],
  columns: Columns = PAYMENT_EXPORT_COLUMNS,
) => ({
  description:
    `${what}, as CSV (RFC 4180: CRLF line ends; a field with a comma, quote or line end is quoted, its quotes ` +
    "doubled). A field a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a CR) gets a leading `'`. " +
    'The first line is the header row, naming these columns in this order:\n\n' +
    columns.map(({ name, description }) => `- \`${name}\`: ${description}`).join('\n'),
  contentType: 'text/csv',
  headers: { 'content-disposition': `\`attachment; filename="${filename}"\`` },
  example: [columns.map(({ name }) => name), ...exampleRows].map(csvRecord).join(''),
});

const exampleRow = [
  'payment-acme-order-1001',
  'order-1001',
  'mobile_money_debit',
  'succeeded',
  '12.50',
  '2026-05-04T10:00:00.000Z',
  '2026-05-04T10:00:03.200Z',
  '100231',
  null,
  null,
  null,
];

const exportPayments = route(
  {
    operationId: 'exportPayments',
    method: 'GET',
    path: '/v1/payments.csv',
    tag: 'Payments',
    summary: 'Export payments as CSV',
    description:
      'Every payment the filters hold, in one file streamed as it is read: oldest first (creation time, then id), so ' +
      'a range exported twice is the same file. The filters are those of `GET /v1/payments`: a creation-time range ' +
      '`created[gte]` ≤ created < `created[lt]`, status, type, reference and payout batch. A merchant exports its own ' +
      "payments, an operator everyone's.",
    auth: 'merchant_or_operator',
    query: z.strictObject(paymentFilters),
    answers: { 200: csvAnswer('The payments', 'payments.csv', [exampleRow]) },
    errors: { 400: ['invalid_request'], ...withKey, ...temporal },
  },
  async ({ caller, query, reply }, { exports }: ExportRouteDeps) => {
    const { batch, ...filter } = listQuery(query);
    const merchantId = caller.role === 'merchant' ? caller.merchantId : undefined;
    const rows = await exports.rows({ ...filter, batchId: batch, merchantId });
    return sendCsv(reply, 'payments.csv', rows);
  },
);

const exportPayoutBatchItems = route(
  {
    operationId: 'exportPayoutBatchItems',
    method: 'GET',
    path: '/v1/payout-batches/:id/items.csv',
    tag: 'Payout batches',
    summary: "Export a batch's items as CSV",
    description:
      'The payments of the batch that have started, all of them (10,000 in one request), oldest first, streamed as ' +
      'they are read: the batch report. The columns are those of `GET /v1/payments.csv`.',
    auth: 'merchant_or_operator',
    params: z.object({ id: batchId }),
    notFound: 'no such payout batch',
    query: z.strictObject({ status: z.enum(PAYMENT_STATUSES).optional() }),
    answers: {
      200: csvAnswer("The batch's items", 'batch-acme-payroll-2026-05-items.csv', [
        [
          'payment-acme-payroll-2026-05~emp-1',
          'emp-1',
          'bank_credit',
          'succeeded',
          '250.00',
          '2026-05-04T10:00:00.200Z',
          '2026-05-04T10:00:02.900Z',
          '100245',
          null,
          null,
          'batch-acme-payroll-2026-05',
        ],
      ]),
    },
    errors: { 400: ['invalid_request'], ...withKey, 404: ['not_found'], ...temporal },
  },
  async ({ caller, params, query, reply }, { exports, batches }: ExportRouteDeps) => {
    await assertBatchVisible(caller, params.id, batches);
    const rows = await exports.rows({ batchId: params.id, status: query.status });
    return sendCsv(reply, `${params.id}-items.csv`, rows);
  },
);

const exportPayoutBatchReport = route(
  {
    operationId: 'exportPayoutBatchReport',
    method: 'GET',
    path: '/v1/payout-batches/:id/report.csv',
    tag: 'Payout batches',
    summary: "A batch's outcome report as CSV",
    description:
      'Every item of the batch in upload order, one line each, from the system of record, streamed as it is read: ' +
      'its final status (or `not_started`: an item the batch has not started, or never will once cancelled), the ' +
      "provider's transaction id and the failure. Read it when the batch has closed for the final report; before, " +
      'it shows the items as they stand.',
    auth: 'merchant_or_operator',
    params: z.object({ id: batchId }),
    notFound: 'no such payout batch',
    answers: {
      200: csvAnswer(
        "The batch's report",
        'batch-acme-payroll-2026-05-report.csv',
        [
          ['1', 'emp-1', '250.00', 'succeeded', '100245', null, null, 'payment-acme-payroll-2026-05~emp-1'],
          [
            '2',
            'emp-2',
            '310.00',
            'failed',
            '100246',
            'provider_declined',
            'the account is closed',
            'payment-acme-payroll-2026-05~emp-2',
          ],
          ['3', 'emp-3', '120.00', 'not_started', null, null, null, 'payment-acme-payroll-2026-05~emp-3'],
        ],
        BATCH_REPORT_COLUMNS,
      ),
    },
    errors: { ...withKey, 404: ['not_found'], ...temporal },
  },
  async ({ caller, params, reply }, { exports, batches }: ExportRouteDeps) => {
    await assertBatchVisible(caller, params.id, batches);
    const rows = await exports.batchReport(params.id);
    return sendCsv(reply, `${params.id}-report.csv`, rows, REPORT_HEADER);
  },
);

/** The export routes, in the order the OpenAPI document lists them. */
export const EXPORT_ROUTES = [exportPayments, exportPayoutBatchItems, exportPayoutBatchReport];

/** A 404 for a batch that does not exist, or is another merchant's, as `GET /v1/payout-batches/{id}` answers. */
async function assertBatchVisible(caller: Caller, id: string, batches: Batches): Promise<void> {
  if (caller.role === 'merchant' && !isMerchantBatch(caller.merchantId, id)) {
    throw new AppError('not_found', `no payout batch ${id}`);
  }
  await batches.read(id);
}

/** Streams the rows as a CSV attachment; the rows' stream is destroyed (its connection given back) if the client goes. */
function sendCsv(
  reply: FastifyReply,
  filename: string,
  rows: Readable,
  header: readonly string[] = HEADER,
): FastifyReply {
  // Ids are letters, digits and a few signs; anything else would need quoting in the header.
  const safeName = filename.replace(/[^A-Za-z0-9._~-]/g, '_');
  const csv = pipeline(rows, csvEncoder(header), () => {
    // Failures reach fastify through the encoder: an error answer before the first row, a cut connection after.
  });
  return reply
    .header('content-type', 'text/csv; charset=utf-8; header=present')
    .header('content-disposition', `attachment; filename="${safeName}"`)
    .send(csv);
}
