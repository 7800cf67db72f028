import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_OVERLAP_MS, merchantIdSchema, overlapSchema } from '../domain/merchant-resources';
import type { MerchantResource } from '../domain/merchant-resources';
import { MerchantAccounts } from '../payments/merchant-accounts';
import type { OpsContext } from './ops-context';
import { defaultOperator, operatorOption, parseOptions, wantsJson } from './options';
import { fields, json, table, time } from './output';

const by = operatorOption;
const createOptions = z.object({ name: z.string().min(1).max(200).optional(), by });
const rollOptions = z.object({ overlap: overlapSchema.optional(), by });
const revokeOptions = z.object({ by });
const merchantArgument = z.object({ merchant: merchantIdSchema });

const WHY = 'merchants and their API keys are kept in PostgreSQL';

/** `ops merchants create|list` and `ops keys roll|revoke`: merchants and their API keys, in PostgreSQL. */
export function registerMerchants(program: Command, ctx: OpsContext): void {
  // The servers hear of each change through PostgreSQL (NOTIFY): no restart.
  const accounts = () => new MerchantAccounts(ctx.records(WHY));
  const merchants = program.command('merchants').description('merchants: create (prints its first API key), list');

  merchants
    .command('create')
    .description('add a merchant; its API key is printed this once (only its hash is stored)')
    .argument('<merchant>', 'merchant id: 1–32 lower-case letters or digits')
    .option('--name <name>', "the merchant's name")
    .option('--by <name>', 'operator name recorded with the change', defaultOperator())
    .action(async (merchant: string, raw: Record<string, unknown>, command: Command) => {
      const { merchant: id } = parseOptions(merchantArgument, { merchant });
      const options = parseOptions(createOptions, raw);
      const created = await accounts().create(options.by, id, options.name);
      printIssued(ctx, command, created.merchant, created.apiKey, undefined);
    });

  merchants
    .command('list')
    .description('every merchant and its stored keys (never the keys themselves)')
    .action(async (_raw: Record<string, unknown>, command: Command) => {
      const list = await accounts().list();
      ctx.write(wantsJson(command.optsWithGlobals()) ? json(list) : table(list.map(row), COLUMNS));
    });

  const keys = program.command('keys').description("merchants' API keys: roll (with an overlap), revoke");

  keys
    .command('roll')
    .description('a new API key for the merchant, printed this once; its other keys keep working for the overlap')
    .argument('<merchant>', 'merchant id')
    .option('--overlap <duration>', 'how long the old keys keep working: 0, or up to 30d', '24h')
    .option('--by <name>', 'operator name recorded with the change', defaultOperator())
    .action(async (merchant: string, raw: Record<string, unknown>, command: Command) => {
      const { merchant: id } = parseOptions(merchantArgument, { merchant });
      const options = parseOptions(rollOptions, raw);
      const rolled = await accounts().roll(options.by, id, options.overlap ?? DEFAULT_OVERLAP_MS);
      printIssued(ctx, command, rolled.merchant, rolled.apiKey, rolled.previousKeysExpireAt.toISOString());
    });

  keys
    .command('revoke')
    .description('revoke every stored API key of the merchant now, on every server')
    .argument('<merchant>', 'merchant id')
    .option('--by <name>', 'operator name recorded with the change', defaultOperator())
    .action(async (merchant: string, raw: Record<string, unknown>, command: Command) => {
      const { merchant: id } = parseOptions(merchantArgument, { merchant });
      const options = parseOptions(revokeOptions, raw);
      const revoked = await accounts().revoke(options.by, id);
      ctx.write(
        wantsJson(command.optsWithGlobals())
          ? json(revoked)
          : fields({ merchant: revoked.merchant.id, revoked: revoked.revoked }),
      );
    });
}

function printIssued(
  ctx: OpsContext,
  command: Command,
  merchant: MerchantResource,
  apiKey: string,
  previousExpireAt: string | undefined,
): void {
  ctx.write(
    wantsJson(command.optsWithGlobals())
      ? json({ merchant, api_key: apiKey, previous_keys_expire_at: previousExpireAt ?? null })
      : fields({
          merchant: merchant.id,
          'api key': apiKey,
          'previous keys stop': time(previousExpireAt),
          note: 'the key is shown this once: only its hash is stored',
        }),
  );
}

const COLUMNS = ['merchant', 'name', 'source', 'keys', 'created'] as const;

function row(m: MerchantResource): Record<(typeof COLUMNS)[number], string | number | null> {
  const live = m.keys.filter((k) => !k.revoked_at && (!k.expires_at || Date.parse(k.expires_at) > Date.now()));
  return { merchant: m.id, name: m.name, source: m.source, keys: live.length, created: time(m.created_at) };
}
