import { existsSync, readFileSync } from 'node:fs';
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
  codecTokenSecret: string;
  sandboxToken: string;
  /** Signs the notifications the sandbox's merchant side receives (MERCHANT_WEBHOOKS). */
  notificationSecret: string;
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
    CODEC_TOKEN_SECRET: fill(env.CODEC_TOKEN_SECRET, secrets.codecTokenSecret),
  };
}
