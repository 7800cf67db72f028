import type { PaymentType } from '../../src/domain/requests';
import { sampleRequest } from '../../src/local/sample-requests';

/** Every sandbox scenario (PRODUCT.md): the last two digits of the phone or account number. */
export const SCENARIOS = ['00', '11', '22', '33', '44', '55', '66', '77', '88', '99'] as const;

/** A payment of the type and scenario. */
export function paymentBody(type: PaymentType, scenario: string, reference: string) {
  return sampleRequest(type, scenario, reference);
}

/** A batch's items: bank credits cycling through every scenario. */
export function batchItems(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    reference: `item-${String(i + 1).padStart(5, '0')}`,
    amount: 10 + (i % 7),
    customer_name: 'Kofi Boateng',
    bank_code: 'GH030100',
    account_number: `1234${String(i).padStart(4, '0').slice(-4)}${SCENARIOS[i % SCENARIOS.length]}`,
  }));
}
