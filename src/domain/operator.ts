/** Operator names (people, in OPERATOR_API_KEYS and on resolutions): 1–32 of lowercase letters, digits, `.`, `_`, `-`. */
export const OPERATOR_NAME = /^[a-z0-9._-]{1,32}$/;

/** An operator name made from an OS user name (`Jane Doe` → `jane-doe`), or `operator` when nothing is left. */
export function operatorNameFrom(username: string): string {
  const name = username
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32);
  return OPERATOR_NAME.test(name) ? name : 'operator';
}
