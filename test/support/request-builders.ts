import { request } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { StoredPaymentRequest } from '../../src/domain/payment-model';
import type { PaymentRequest, PaymentType } from '../../src/domain/requests';
import { sampleRequest } from '../../src/local/sample-requests';

let counter = 0;

/** A unique merchant reference for one test payment. */
export function uniqueReference(label: string): string {
  return `${label}-${Date.now().toString(36)}-${++counter}`;
}

/** A valid request of the given type whose sandbox scenario is chosen by the last two digits. */
export function paymentRequest(type: PaymentType, scenario: string, reference = uniqueReference(type)): PaymentRequest {
  return sampleRequest(type, scenario, reference);
}

/** A request as the workflow keeps it (card data replaced by a vault token), for tests that skip the server. */
export function storedRequest(
  type: PaymentType,
  scenario: string,
  reference?: string,
  token = 'cvt_test',
): StoredPaymentRequest {
  const request = paymentRequest(type, scenario, reference);
  if (request.type !== 'card_payment') return request;
  const { card_number, card_cvv: _cvv, expiry_month: _month, expiry_year: _year, ...rest } = request;
  return { ...rest, card: { token, last4: card_number.slice(-4) } };
}

/** POSTs payloads to a codec endpoint (`…/encode`, `…/decode`) as the Temporal Web UI and CLI do. */
export async function postCodec<P = unknown>(
  url: string,
  payloads: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; payloads: P[] }> {
  const response = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ payloads }),
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    payloads: response.statusCode === 200 ? (JSON.parse(text) as { payloads: P[] }).payloads : [],
  };
}
