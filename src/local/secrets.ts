import { chmodSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What `npm start` generates into `DATA_DIR/secrets.json` outside production, so keys survive restarts. */
export interface LocalSecrets {
  merchantKey: string;
  operatorKey: string;
  /** CALLBACK_KEYS (data directories from before it kept a `callbackSecret`, no longer used). */
  callbackKeys: string;
  fingerprintSecret: string;
  encryptionKeys: string;
  signingKeys: string;
  /** The card vault's own keys (VAULT_KEYS), apart from ENCRYPTION_KEYS. */
  vaultKeys: string;
  codecTokenSecret: string;
  sandboxToken: string;
  /** Signs the notifications the sandbox's merchant side receives (MERCHANT_WEBHOOKS). */
  notificationSecret: string;
}

/**
 * Makes DATA_DIR private: created 0700 (an existing one loses its group and others' bits), and what this process and
 * its children create from now on is private too (umask 077: files 0600, directories 0700). PostgreSQL's OS user is
 * let through it later, search only, when it runs as root (local/postgres.ts).
 */
export function privateDataDir(dir: string): void {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077) chmodSync(dir, mode & 0o700);
}

/** Where `npm start` keeps its generated secrets. */
export function localSecretsFile(dataDir: string): string {
  return join(dataDir, 'secrets.json');
}

/** The secrets `npm start` generated in this data directory, as far as it has any. */
export function readLocalSecrets(dataDir: string): Partial<LocalSecrets> {
  const file = localSecretsFile(dataDir);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<LocalSecrets>) : {};
}

/**
 * The environment with the keys `npm start` generated filled in where they are unset, so the operator CLI works
 * next to `npm start` without exporting them. Never in production, where every key is set explicitly.
 */
export function withLocalSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (env.NODE_ENV === 'production') return env;
  const secrets = readLocalSecrets(env.DATA_DIR || '.data');
  const fill = (value: string | undefined, generated: string | undefined) => (value ? value : generated);
  return {
    ...env,
    ENCRYPTION_KEYS: fill(env.ENCRYPTION_KEYS, secrets.encryptionKeys),
    SIGNING_KEYS: fill(env.SIGNING_KEYS, secrets.signingKeys),
    VAULT_KEYS: fill(env.VAULT_KEYS, secrets.vaultKeys),
    CODEC_TOKEN_SECRET: fill(env.CODEC_TOKEN_SECRET, secrets.codecTokenSecret),
  };
}
