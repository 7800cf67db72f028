import type { PaymentResource } from '../../src/domain/payment-model';
import type { BenchStack } from './bench-stack';
import { waitForClose } from './history';

let serial = 0;
const runId = Date.now().toString(36);

/** A mobile-money debit whose phone number ends in `digits` (the sandbox's scenario: 00 succeeds by callback). */
function debit(digits: string) {
  serial += 1;
  return {
    type: 'mobile_money_debit',
    reference: `bench-${runId}-${serial}`,
    amount: 12.5,
    channel: 1,
    phone_number: `2332412345${digits}`,
    name: 'Ama Mensah',
  };
}

/** A single bank credit like a batch's items (account number ending `00`: succeeds by callback). */
function credit() {
  serial += 1;
  return {
    type: 'bank_credit',
    reference: `bench-${runId}-${serial}`,
    amount: 12.5,
    customer_name: 'Kofi Boateng',
    bank_code: 'GH030100',
    account_number: '123456789000',
  };
}

/** POSTs a payment and checks it was created; the payment's id. */
export async function createPayment(
  stack: BenchStack,
  digits: string,
  body: object = debit(digits),
): Promise<PaymentResource> {
  const created = await stack.api<PaymentResource>('POST', '/v1/payments', body);
  if (created.status !== 201)
    throw new Error(`POST /v1/payments answered ${created.status}: ${JSON.stringify(created.body)}`);
  return created.body;
}

/**
 * One payment as a merchant lives it: POST, then its final status as GET shows it. The bench learns when to GET as the
 * twin's client learns its twin's end, from one long poll for the close event (no polling load); the GET must then
 * show `succeeded`.
 */
export async function paymentToFinalStatus(stack: BenchStack, type: 'debit' | 'credit' = 'debit'): Promise<string> {
  const payment = await createPayment(stack, '00', type === 'credit' ? credit() : debit('00'));
  if (payment.status !== 'succeeded') await waitForClose(stack.client, payment.id);
  const shown = await stack.api<PaymentResource>('GET', `/v1/payments/${payment.id}`);
  if (shown.status !== 200 || shown.body.status !== 'succeeded') {
    throw new Error(`GET ${payment.id} answered ${shown.status} ${shown.body.status}, not succeeded`);
  }
  return payment.id;
}
