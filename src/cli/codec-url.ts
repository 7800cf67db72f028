import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { z } from 'zod';
import { OPERATOR_NAME, operatorNameFrom } from '../domain/operator';
import { CODEC_TOKEN_MAX_TTL_MS, signCodecToken } from '../crypto/codec-tokens';
import { parseCliSettings } from './ops-context';
import type { OpsContext } from './ops-context';
import { durationOption, parseOptions, wantsJson } from './options';
import { fields, json } from './output';

/** What `codec-url` reads: the secret the server checks Web UI codec tokens with, and where the server is. */
const codecUrlSettings = z.object({
  CODEC_TOKEN_SECRET: z.string().min(32, "must be at least 32 characters (the server's CODEC_TOKEN_SECRET)"),
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  PORT: z.coerce.number().int().min(1).max(65535).default(3000),
});

const codecUrlOptions = z.object({
  ttl: durationOption.pipe(
    z.number().min(1000, 'must be at least 1s').max(CODEC_TOKEN_MAX_TTL_MS, 'must be at most 24h'),
  ),
  operator: z.string().regex(OPERATOR_NAME, 'must be a name from OPERATOR_API_KEYS (a-z 0-9 . _ -, 1–32)'),
});

/**
 * `ops codec-url`: a Web UI codec endpoint for one operator, decode-only and expiring, signed here with
 * CODEC_TOKEN_SECRET (the server's `POST /v1/operator/codec-tokens` does the same for an operator key).
 */
export function registerCodecUrl(program: Command, ctx: OpsContext): void {
  program
    .command('codec-url')
    .description("an expiring, decode-only codec endpoint for the Web UI's Codec Server settings")
    .option('--ttl <duration>', 'how long it works, at most 24h', '8h')
    .option(
      '--operator <name>',
      'the operator it is for, as named in OPERATOR_API_KEYS',
      operatorNameFrom(userInfo().username),
    )
    .action((raw: Record<string, unknown>, command: Command) => {
      const { ttl, operator } = parseOptions(codecUrlOptions, raw);
      const settings = parseCliSettings(codecUrlSettings, ctx.env);
      const base = (settings.PUBLIC_BASE_URL ?? `http://localhost:${settings.PORT}`).replace(/\/+$/, '');
      const expiresAt = new Date(Date.now() + ttl);
      const url = `${base}/codec/ui/${signCodecToken(settings.CODEC_TOKEN_SECRET, operator, expiresAt)}`;
      const result = { operator, codec_endpoint: url, expires_at: expiresAt.toISOString() };
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(result) : fields(result));
    });
}
