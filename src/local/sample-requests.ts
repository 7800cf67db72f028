import type { PaymentRequest, PaymentType } from '../domain/requests';

// Requests for the sandbox's scenarios, shared by the tests and the scripts (chaos, benchmark).

/** A valid request of the given type whose sandbox scenario is chosen by the last two digits. */
export function sampleRequest(type: PaymentType, scenario: string, reference: string): PaymentRequest {
  switch (type) {
    case 'mobile_money_debit':
      return {
        type,
        reference,
        amount: 12.5,
        channel: 1,
        phone_number: `2332412345${scenario}`,
        name: 'Ama Mensah',
      };
    case 'card_payment':
      return {
        type,
        reference,
        amount: 40,
        channel: 1,
        first_name: 'Ama',
        last_name: 'Mensah',
        email: 'ama@example.com',
        phone_number: `+2332412345${scenario}`,
        card_number: '4111111111111111',
        card_cvv: '123',
        expiry_month: '12',
        expiry_year: String(new Date().getUTCFullYear() + 3),
        return_url: 'https://merchant.example/return',
      };
    case 'bank_credit':
      return {
        type,
        reference,
        amount: 250,
        customer_name: 'Kofi Boateng',
        bank_code: 'GH030100',
        account_number: `12345678${scenario}`,
        description: 'May payout',
      };
  }
}

/** Payout batch items (bank credits) whose sandbox scenarios cycle through `scenarios`. */
export function sampleBatchItems(count: number, scenarios: readonly string[] = ['00']) {
  return Array.from({ length: count }, (_, i) => ({
    reference: `item-${String(i + 1).padStart(5, '0')}`,
    amount: 10 + (i % 7),
    customer_name: 'Kofi Boateng',
    bank_code: 'GH030100',
    account_number: `1234${String(i).padStart(4, '0').slice(-4)}${scenarios[i % scenarios.length]}`,
  }));
}
