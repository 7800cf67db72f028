// One secret, one purpose: production refuses a key or secret that appears under two settings, two merchants or two
// operators (a signing key that is also an encryption key, a merchant key that is another merchant's…).
import { parseKeyring } from '../crypto/keyring';
import { commaList, merchantWebhooks } from './setting-parsers';

/** One secret of a setting and whose it is there (`key "k1"`, `the key of merchant "acme"`), never its value. */
interface SecretUse {
  name: string;
  owner: string;
  material: string[];
}

const KEYRINGS = ['ENCRYPTION_KEYS', 'SIGNING_KEYS', 'VAULT_KEYS', 'CALLBACK_KEYS'];
const SINGLE_SECRETS = ['CALLBACK_SECRET', 'CODEC_TOKEN_SECRET', 'FINGERPRINT_SECRET'];
const KEY_LISTS: Record<string, string> = { MERCHANT_API_KEYS: 'merchant', OPERATOR_API_KEYS: 'operator' };

/**
 * What a secret is, however it is written: its text, and its bytes when it is base64 (or base64url) of 16 bytes or
 * more, so a key written as base64 in one setting and base64url in another is the same secret.
 */
function material(secret: string): string[] {
  const forms = [`text:${secret}`];
  if (/^[A-Za-z0-9+/_-]{22,}={0,2}$/.test(secret)) {
    const bytes = Buffer.from(secret, 'base64');
    if (bytes.length >= 16) forms.push(`bytes:${bytes.toString('hex')}`);
  }
  return forms;
}

/** Every secret the named settings hold; a malformed setting is the schema's to report, and holds none here. */
function secretUses(env: NodeJS.ProcessEnv, names: readonly string[]): SecretUse[] {
  const uses: SecretUse[] = [];
  const value = (name: string) => (names.includes(name) && env[name] ? env[name] : undefined);
  for (const name of KEYRINGS) {
    const text = value(name);
    if (!text) continue;
    try {
      for (const { id, key } of parseKeyring(text).byId.values()) {
        uses.push({ name, owner: `key "${id}"`, material: material(key.toString('base64')) });
      }
    } catch {
      // Named by the schema.
    }
  }
  for (const name of SINGLE_SECRETS) {
    const text = value(name);
    if (text) uses.push({ name, owner: 'the secret', material: material(text) });
  }
  for (const [name, kind] of Object.entries(KEY_LISTS)) {
    for (const entry of commaList.parse(value(name) ?? '')) {
      const colon = entry.indexOf(':');
      if (colon < 1) continue;
      uses.push({
        name,
        owner: `the key of ${kind} "${entry.slice(0, colon)}"`,
        material: material(entry.slice(colon + 1)),
      });
    }
  }
  const webhooks = merchantWebhooks.safeParse(value('MERCHANT_WEBHOOKS') ?? '{}');
  for (const [merchantId, { secrets }] of webhooks.success ? webhooks.data : []) {
    for (const secret of new Set(secrets)) {
      uses.push({
        name: 'MERCHANT_WEBHOOKS',
        owner: `the secret of merchant "${merchantId}"`,
        material: material(secret),
      });
    }
  }
  return uses;
}

/**
 * Each setting that holds a secret already held elsewhere (another setting, another merchant or operator), named with
 * both owners and never the value. A keyring's repeats within itself are its own rule's (production-rules.ts).
 */
export function sharedSecretProblems(
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): { name: string; problem: string }[] {
  const seen = new Map<string, SecretUse>();
  const problems: { name: string; problem: string }[] = [];
  for (const use of secretUses(env, names)) {
    const first = use.material.map((form) => seen.get(form)).find((other) => other !== undefined);
    if (first && !(first.name === use.name && KEYRINGS.includes(use.name))) {
      const where = first.name === use.name ? first.owner : `${first.name}'s ${first.owner}`;
      problems.push({
        name: use.name,
        problem: `${use.owner} is also ${where}: production needs its own secret for each purpose, merchant and operator`,
      });
    }
    for (const form of use.material) if (!seen.has(form)) seen.set(form, use);
  }
  return problems;
}
