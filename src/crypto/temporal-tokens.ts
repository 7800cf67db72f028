import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';

// The JWTs Temporal's default claim mapper reads (ES256, a `kid` it finds in the JWKS, `sub`, `permissions`): the
// project issues them itself for its own cluster, from a key it generates (docs/security.md, "Temporal authorization").

/** Who holds a token on the project's own cluster; each gets the permissions PERMISSIONS names. */
export type TemporalTokenHolder = 'server' | 'worker' | 'operator' | 'reader' | 'setup';

/** Every holder, in the order the cluster prints them. */
export const TOKEN_HOLDERS: readonly TemporalTokenHolder[] = ['server', 'worker', 'operator', 'reader', 'setup'];

/**
 * The `permissions` claim of each holder (`<namespace>:<role>`, `temporal-system:admin`). The project's
 * temporal-server lets only `worker` take and answer tasks, and otherwise asks what Temporal's default authorizer
 * asks: a worker reads (histories, the namespace) and writes nothing else; the server and operators start, signal and
 * update but take no task (docs/security.md).
 */
export function permissionsOf(holder: TemporalTokenHolder, namespace: string): string[] {
  switch (holder) {
    case 'server':
      return [`${namespace}:write`];
    case 'worker':
      return [`${namespace}:read`, `${namespace}:worker`];
    case 'operator':
      return [`${namespace}:read`, `${namespace}:write`];
    case 'reader':
      return [`${namespace}:read`];
    case 'setup':
      return ['temporal-system:admin'];
  }
}

/** The signing key pair, as PEM (private, PKCS#8) kept 0600 by the caller. */
export function generateTokenKey(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/** The key's id: its RFC 7638 thumbprint, so a new key never reuses an old id. */
function keyId(jwk: JsonWebKey): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

/** The public half as the JWKS temporal-server reads (`global.authorization.jwtKeyProvider.keySourceURIs`). */
export function jwksOf(privateKeyPem: string): string {
  const jwk = createPublicKey(createPrivateKey(privateKeyPem)).export({ format: 'jwk' });
  return `${JSON.stringify({ keys: [{ ...jwk, kid: keyId(jwk), use: 'sig', alg: 'ES256' }] }, null, 2)}\n`;
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A signed token (ES256) for one holder in one namespace, valid `lifetimeSeconds` from `now`. */
export function issueTemporalToken(
  privateKeyPem: string,
  holder: TemporalTokenHolder,
  namespace: string,
  lifetimeSeconds: number,
  now = Date.now(),
): string {
  const key: KeyObject = createPrivateKey(privateKeyPem);
  const kid = keyId(createPublicKey(key).export({ format: 'jwk' }));
  const iat = Math.floor(now / 1000);
  const header = base64url({ alg: 'ES256', typ: 'JWT', kid });
  const payload = base64url({
    sub: `payments-${holder}`,
    permissions: permissionsOf(holder, namespace),
    iat,
    exp: iat + lifetimeSeconds,
  });
  const signature = sign('sha256', Buffer.from(`${header}.${payload}`), { key, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${signature.toString('base64url')}`;
}
