/** A bank the sandbox accepts for bank credits. */
export interface Bank {
  code: string;
  name: string;
}

export const BANKS: readonly Bank[] = [
  { code: 'GH030100', name: 'GCB Bank' },
  { code: 'GH020100', name: 'Absa Bank Ghana' },
  { code: 'GH130100', name: 'Ecobank Ghana' },
  { code: 'GH190100', name: 'Stanbic Bank Ghana' },
  { code: 'GH240100', name: 'Fidelity Bank Ghana' },
  { code: 'GH280100', name: 'Access Bank Ghana' },
];

/** Whether the code names a supported bank. */
export function isKnownBank(code: string): boolean {
  return BANKS.some((bank) => bank.code === code);
}
