import { createHmac } from 'node:crypto';

/** A keyed digest of a request, kept in a workflow's memo to tell a repeated request from a reused reference. */
export function requestFingerprint(secret: string, scope: string, request: unknown): string {
  return createHmac('sha256', secret)
    .update(`${scope}:${canonicalJson(request)}`)
    .digest('base64url');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
