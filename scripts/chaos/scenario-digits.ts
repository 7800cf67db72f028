/** Every sandbox scenario (PRODUCT.md): the last two digits of the phone or account number. */
export const SCENARIOS = ['00', '11', '22', '33', '44', '55', '66', '77', '88', '99'] as const;
