import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOKEN_HOLDERS, generateTokenKey, issueTemporalToken, jwksOf } from '../crypto/temporal-tokens';
import type { TemporalTokenHolder } from '../crypto/temporal-tokens';

/** How long the tokens a cluster start issues stay valid; every start issues new ones (docs/operating.md). */
export const TOKEN_LIFETIME_SECONDS = 30 * 24 * 3600;

/** The cluster's authorization material: the JWKS temporal-server reads, and each holder's token and profile. */
export interface ClusterAuth {
  /** `<dir>/jwks/jwks.json`: the public keys (JWKS) for `keySourceURIs` (file://). */
  jwksFile: string;
  tokens: Record<TemporalTokenHolder, string>;
  /** `<dir>/<holder>/temporal.toml`: a Temporal profile (address, namespace, API key, plaintext) for TEMPORAL_CONFIG_FILE. */
  profileFile: (holder: TemporalTokenHolder) => string;
  /** `<dir>/<holder>/token`: the token alone, for `TEMPORAL_API_KEY="$(cat …)"`. */
  tokenFile: (holder: TemporalTokenHolder) => string;
}

function writePrivate(file: string, content: string): void {
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/**
 * Keeps the signing key in `<dir>/signing-key.pem` (generated once, 0600) and writes its JWKS and, for each holder,
 * a fresh token and a Temporal profile in `<dir>/<holder>/` (0700 directories, 0600 files). The frontend `address`
 * is plaintext: the tokens travel unencrypted, so it must be loopback or a private network (docs/security.md).
 */
export function writeClusterAuth(dir: string, namespace: string, address: string): ClusterAuth {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const keyFile = join(dir, 'signing-key.pem');
  if (!existsSync(keyFile)) writePrivate(keyFile, generateTokenKey());
  const key = readFileSync(keyFile, 'utf8');
  // In a directory of its own: compose mounts only it into the temporal container.
  mkdirSync(join(dir, 'jwks'), { recursive: true, mode: 0o700 });
  const jwksFile = join(dir, 'jwks', 'jwks.json');
  writePrivate(jwksFile, jwksOf(key));
  const tokenFile = (holder: TemporalTokenHolder) => join(dir, holder, 'token');
  const profileFile = (holder: TemporalTokenHolder) => join(dir, holder, 'temporal.toml');
  const tokens = {} as Record<TemporalTokenHolder, string>;
  for (const holder of TOKEN_HOLDERS) {
    mkdirSync(join(dir, holder), { recursive: true, mode: 0o700 });
    const token = issueTemporalToken(key, holder, namespace, TOKEN_LIFETIME_SECONDS);
    tokens[holder] = token;
    writePrivate(tokenFile(holder), `${token}\n`);
    writePrivate(
      profileFile(holder),
      `# Written by src/local/cluster-auth.ts: the ${holder}'s connection to the cluster (TEMPORAL_CONFIG_FILE).\n` +
        `[profile.default]\naddress = ${JSON.stringify(address)}\nnamespace = ${JSON.stringify(namespace)}\n` +
        `api_key = ${JSON.stringify(token)}\n\n[profile.default.tls]\ndisabled = true\n`,
    );
  }
  return { jwksFile, tokens, profileFile, tokenFile };
}
