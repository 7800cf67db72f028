import { operatorKeyList } from '../config/setting-parsers';
import { CODEC_TOKEN_TTL_MS, signCodecToken } from '../crypto/codec-tokens';

/**
 * The banner's Web UI decoding lines: outside production, a fresh codec endpoint for the first operator (decode-only,
 * expiring) to paste into the Web UI's Codec Server settings; in production, only how to ask for one. No secret goes on the dev server's command line or into the UI's configuration,
 * which every process on the machine and every browser could read.
 */
export function webUiCodecLines(env: NodeJS.ProcessEnv, publicBaseUrl: string): string[] {
  const operators = operatorKeyList.safeParse(env.OPERATOR_API_KEYS ?? '');
  const operator = operators.success ? operators.data[0]?.name : undefined;
  if (!env.CODEC_TOKEN_SECRET || !operator) return [];
  // In production no live token goes to a terminal or a log: each operator asks for their own.
  if (env.NODE_ENV === 'production') {
    return [`  Web UI decoding  \`npm run ops -- codec-url\` or \`POST /v1/operator/codec-tokens\` (operator key)`];
  }
  const expiresAt = new Date(Date.now() + CODEC_TOKEN_TTL_MS);
  return [
    `  Web UI decoding  paste into the Web UI's Codec Server settings, "use my browser setting" (for ${operator}, ` +
      `decode only, until ${expiresAt.toISOString().replace(/\.\d+Z$/, 'Z')}):`,
    `                   ${publicBaseUrl}/codec/ui/${signCodecToken(env.CODEC_TOKEN_SECRET, operator, expiresAt)}`,
    '                   a new one: `npm run ops -- codec-url` or `POST /v1/operator/codec-tokens` (operator key)',
  ];
}
