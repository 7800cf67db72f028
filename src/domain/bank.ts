/** A bank the provider can credit, from its list of supported banks. */
export interface Bank {
  code: string;
  name: string;
}
