import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfigOrExit } from './config/config-loading';
import { withoutPassword } from './config/setting-parsers';
import { productionProblems } from './config/production-rules';
import { serverSchema, startSchema, workerSchema } from './config/process-settings';
import type { StartConfig } from './config/process-settings';
import { WORKER_COMMAND, WORKER_ENV, WORKER_SCRIPT } from './local/build-outputs';
import { generateKeyEntry } from './crypto/keyring';
import { newWebhookSecret } from './crypto/webhook-secrets';
import { operatorNameFrom } from './domain/operator';
import { temporalEndpoint, temporalSettingProblems } from './temporal/connection-settings';
import type { TemporalEndpoint } from './temporal/connection-settings';
import { localSecretsFile, privateDataDir, readLocalSecrets } from './local/secrets';
import { webUiCodecLines } from './local/web-ui-codec-lines';
import type { LocalSecrets } from './local/secrets';
import { startDevServer } from './local/dev-server';
import type { DevServer } from './local/dev-server';
import { freePort } from './local/free-port';
import { ensureDatabase, keptPort, postgresUrl, startPostgres } from './local/postgres';
import { startRedisServer } from './local/redis-server';
import { Supervisor, waitForHttp } from './local/supervisor';
import { migrate, openDatabase } from './records/database';

// The embedded default: a persistent Temporal dev server, a private PostgreSQL for the records, the sandbox, the worker
// and the server, as child processes.

/** Settings `npm start` generates outside production; in production each must be set. */
const GENERATED = [
  'MERCHANT_API_KEYS',
  'OPERATOR_API_KEYS',
  'CALLBACK_KEYS',
  'FINGERPRINT_SECRET',
  'ENCRYPTION_KEYS',
  'SIGNING_KEYS',
  'VAULT_KEYS',
] as const;

function log(message: string): void {
  process.stdout.write(`[start] ${message}\n`);
}

/** Secrets generated on the first start and kept in DATA_DIR, so keys and callback URLs survive restarts. */
function localSecrets(dataDir: string): LocalSecrets {
  const kept = readLocalSecrets(dataDir);
  const secrets: LocalSecrets = {
    merchantKey: kept.merchantKey ?? `mk_${randomBytes(24).toString('base64url')}`,
    operatorKey: kept.operatorKey ?? `ok_${randomBytes(24).toString('base64url')}`,
    callbackKeys: kept.callbackKeys ?? generateKeyEntry('cb-1'),
    // Secrets added since a data directory was made are generated on its next start.
    fingerprintSecret: kept.fingerprintSecret ?? randomBytes(32).toString('base64url'),
    // A data directory from before encryption gets its key now (payloads written before need ACCEPT_UNENCRYPTED_PAYLOADS).
    encryptionKeys: kept.encryptionKeys ?? generateKeyEntry('local-1'),
    signingKeys: kept.signingKeys ?? generateKeyEntry('sign-1'),
    vaultKeys: kept.vaultKeys ?? generateKeyEntry('vault-1'),
    codecTokenSecret: kept.codecTokenSecret ?? randomBytes(32).toString('base64url'),
    sandboxToken: kept.sandboxToken ?? `sbx_${randomBytes(24).toString('base64url')}`,
    notificationSecret: kept.notificationSecret ?? newWebhookSecret(),
  };
  if (Object.keys(secrets).some((name) => !(name in kept))) {
    writeFileSync(localSecretsFile(dataDir), JSON.stringify(secrets, null, 2), { mode: 0o600 });
  }
  return secrets;
}

/** How to reach a listening host from this machine: a wildcard address as localhost. */
function shownHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
}

/** Exits with the list of what production refuses: generated secrets, the sandbox, the embedded dev server. */
function refuseDevelopmentSettings(config: StartConfig, temporal: TemporalEndpoint): void {
  const names = new Set([...Object.keys(serverSchema.shape), ...Object.keys(workerSchema.shape)]);
  const problems = productionProblems(process.env, names).map((line) => line.trim());
  // A generated setting the production rules already refuse (`is required in production`) is named once, by them.
  const ruled = new Set(problems.map((line) => line.slice(0, line.indexOf(':'))));
  // CALLBACK_SECRET, the older form, stands in for CALLBACK_KEYS.
  const given = (name: string) => process.env[name] || (name === 'CALLBACK_KEYS' && process.env.CALLBACK_SECRET);
  const missing: string[] = GENERATED.filter((name) => !given(name) && !ruled.has(name));
  if (!config.PROVIDER_BASE_URL) missing.push('PROVIDER_BASE_URL (the sandbox is not for production)');
  if (!config.DATABASE_URL) missing.push('DATABASE_URL (the private PostgreSQL of npm start is not for production)');
  if (!temporal.addressConfigured) {
    missing.push('TEMPORAL_ADDRESS (the embedded Temporal dev server is not for production)');
  } else {
    missing.push(...temporalSettingProblems(process.env, true).map((p) => `${p.setting} (${p.problem})`));
  }
  missing.push(...problems);
  if (missing.length > 0) {
    process.stderr.write(
      `start: NODE_ENV=production refuses generated secrets, the sandbox and the embedded Temporal dev server; set:\n${missing.map((m) => `  ${m}`).join('\n')}\n`,
    );
    process.exit(1);
  }
}

/** The environment the children share: what is set, with the local secrets for what is not. */
function childEnvironment(secrets: LocalSecrets): { env: NodeJS.ProcessEnv; generated: string[] } {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_PRETTY: process.env.LOG_PRETTY ?? 'true' };
  const generated: string[] = [];
  if (!env.MERCHANT_API_KEYS) {
    env.MERCHANT_API_KEYS = `demo:${secrets.merchantKey}`;
    generated.push(`merchant key (merchant "demo"): ${secrets.merchantKey}`);
  }
  if (!env.OPERATOR_API_KEYS) {
    // Operators are people: the generated key belongs to whoever runs `npm start`.
    const name = operatorNameFrom(userInfo().username);
    env.OPERATOR_API_KEYS = `${name}:${secrets.operatorKey}`;
    generated.push(`operator key (operator "${name}"): ${secrets.operatorKey}`);
  }
  env.CALLBACK_KEYS ??= secrets.callbackKeys;
  env.FINGERPRINT_SECRET ??= secrets.fingerprintSecret;
  env.ENCRYPTION_KEYS ??= secrets.encryptionKeys;
  env.SIGNING_KEYS ??= secrets.signingKeys;
  env.VAULT_KEYS ??= secrets.vaultKeys;
  // Optional in production (without it the Web UI cannot decode); generated, like the others, outside it.
  if (process.env.NODE_ENV !== 'production') env.CODEC_TOKEN_SECRET ??= secrets.codecTokenSecret;
  return { env, generated };
}

/** MERCHANT_WEBHOOKS sending each merchant of MERCHANT_API_KEYS to the sandbox's merchant side. */
function sandboxWebhooks(merchantKeys: string, sandboxUrl: string, secret: string): string {
  const merchants = merchantKeys
    .split(',')
    .map((entry) => entry.trim().split(':')[0] ?? '')
    .filter(Boolean);
  const target = { url: `${sandboxUrl}/merchant/notifications`, secrets: [secret] };
  return JSON.stringify(Object.fromEntries(merchants.map((merchantId) => [merchantId, target])));
}

/** The PostgreSQL user and database of `npm start`'s private PostgreSQL. */
const RECORDS = 'payments';

/**
 * DATABASE_URL, or a private PostgreSQL under DATA_DIR/postgres (its port and password kept there) with a `payments`
 * database; migrated either way. Resolves to what the banner shows, never the password.
 */
async function prepareDatabase(
  config: StartConfig,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  supervisor: Supervisor,
): Promise<string> {
  let shown = config.DATABASE_URL && `${withoutPassword(config.DATABASE_URL)} (PostgreSQL of DATABASE_URL)`;
  if (!shown) {
    const dir = join(dataDir, 'postgres');
    log(`starting a private PostgreSQL for the payment records (data in ${dir})…`);
    const postgres = await startPostgres(dir, await keptPort(dir), (line) => process.stderr.write(`${line}\n`), {
      user: RECORDS,
      within: dataDir,
    });
    supervisor.onStop(() => postgres.stop());
    env.DATABASE_URL = await ensureDatabase(postgresUrl(postgres, 'postgres'), RECORDS);
    shown = `${withoutPassword(env.DATABASE_URL)} (private PostgreSQL; password in ${join(dir, 'password')})`;
  }
  const db = openDatabase(env.DATABASE_URL ?? '', { max: 1, applicationName: 'npm start' });
  try {
    await migrate(db, log);
  } finally {
    await db.end();
  }
  return shown;
}

/**
 * Starts what is not configured elsewhere (PostgreSQL, Redis, the Temporal dev server, the sandbox), then the worker
 * and server; resolves to the dev server (if it started one) and the database as the banner shows it.
 */
async function startAll(
  config: StartConfig,
  temporal: TemporalEndpoint,
  dataDir: string,
  env: NodeJS.ProcessEnv,
  secrets: Pick<LocalSecrets, 'notificationSecret'> & { sandboxToken: string },
  supervisor: Supervisor,
): Promise<{ devServer?: DevServer; database: string }> {
  const { sandboxToken } = secrets;
  let devServer: DevServer | undefined;
  // Alongside Redis and Temporal; awaited before the worker and server, which need it.
  const database = prepareDatabase(config, dataDir, env, supervisor);
  database.catch(() => undefined);
  if (!config.VAULT_URL) {
    log('starting a private redis-server for the card vault…');
    const redis = await startRedisServer(await freePort());
    supervisor.onStop(() => redis.stop());
    env.VAULT_URL = redis.url;
  }
  if (!temporal.addressConfigured) {
    log(`starting the Temporal dev server (data in ${join(dataDir, 'temporal.db')})…`);
    const uiOrigins = [`http://localhost:${config.TEMPORAL_UI_PORT}`, `http://127.0.0.1:${config.TEMPORAL_UI_PORT}`];
    env.CODEC_CORS_ORIGINS ??= uiOrigins.join(',');
    devServer = await startDevServer({
      port: config.TEMPORAL_PORT,
      uiPort: config.TEMPORAL_UI_PORT,
      namespace: config.TEMPORAL_NAMESPACE,
      dbFile: join(dataDir, 'temporal.db'),
      log: (line) => process.stderr.write(line),
    });
    const started = devServer;
    supervisor.onStop(() => started.stop());
    env.TEMPORAL_ADDRESS = devServer.address;
  }
  const tsx = (script: string) => ['--import', 'tsx', join(__dirname, script)];
  if (!config.PROVIDER_BASE_URL) {
    const sandboxUrl = `http://127.0.0.1:${config.SANDBOX_PORT}`;
    const sandbox = supervisor.launch('sandbox', tsx('sandbox/main.ts'), {
      SANDBOX_PORT: String(config.SANDBOX_PORT),
      SANDBOX_TOKEN: sandboxToken,
      SANDBOX_DATA_FILE: join(dataDir, 'sandbox.json'),
      SANDBOX_NOTIFICATION_SECRETS: secrets.notificationSecret,
    });
    await waitForHttp(`${sandboxUrl}/sandbox/transactions`, sandbox, 'sandbox', {
      authorization: `Bearer ${sandboxToken}`,
    });
    Object.assign(env, {
      PROVIDER_BASE_URL: sandboxUrl,
      PROVIDER_TOKEN: sandboxToken,
      PROVIDER_STATUS_URL: `${sandboxUrl}/api/transactions/{transaction_id}`,
      PROVIDER_STATUS_BY_REFERENCE_URL: `${sandboxUrl}/api/transactions?reference={reference}`,
    });
    // Every merchant's notifications go to the sandbox's merchant side, which verifies and lists them.
    env.MERCHANT_WEBHOOKS ??= sandboxWebhooks(env.MERCHANT_API_KEYS ?? '', sandboxUrl, secrets.notificationSecret);
  }
  if (!existsSync(WORKER_SCRIPT)) throw new Error('the worker is not built: run `npm run build`');
  const shownDatabase = await database;
  supervisor.launch('worker', [...WORKER_COMMAND], WORKER_ENV);
  const server = supervisor.launch('server', tsx('server.ts'));
  await waitForHttp(`http://127.0.0.1:${config.PORT}/healthz`, server, 'server');
  return { devServer, database: shownDatabase };
}

async function main(): Promise<void> {
  const config = loadConfigOrExit(startSchema, 'start');
  // TEMPORAL_ADDRESS or a profile (TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE) names an external cluster.
  const temporal = (() => {
    try {
      return temporalEndpoint(process.env);
    } catch (err) {
      process.stderr.write(`start: invalid configuration:\n  ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    }
  })();
  if (process.env.NODE_ENV === 'production') refuseDevelopmentSettings(config, temporal);
  const dataDir = resolve(config.DATA_DIR);
  privateDataDir(dataDir);
  const secrets = localSecrets(dataDir);
  const { env, generated } = childEnvironment(secrets);
  const publicBaseUrl = config.PUBLIC_BASE_URL ?? `http://localhost:${config.PORT}`;
  // The sandbox's token guards its ledger (callback URLs, names, phone numbers) as well as its provider API.
  const sandboxToken = env.PROVIDER_TOKEN ?? secrets.sandboxToken;
  const supervisor = new Supervisor(env, log);
  let started: { devServer?: DevServer; database: string } | undefined;
  try {
    started = await startAll(
      config,
      temporal,
      dataDir,
      env,
      { sandboxToken, notificationSecret: secrets.notificationSecret },
      supervisor,
    );
  } catch (err) {
    log(`failed: ${err instanceof Error ? err.message : String(err)}`);
    await supervisor.stopAll(1);
  }
  const devServer = started?.devServer;

  const lines = [
    '',
    'Payment orchestrator is running. Ctrl-C stops everything; payments persist in ' + dataDir,
    `  merchant API     ${publicBaseUrl}/v1/payments`,
    devServer?.uiUrl ? `  Temporal Web UI  ${devServer.uiUrl}` : `  Temporal         ${temporal.address}`,
    `  records          ${started?.database}`,
    `  codec server     ${publicBaseUrl}/codec (operator key: decode and encode)`,
    ...webUiCodecLines(env, publicBaseUrl),
    config.PROVIDER_BASE_URL
      ? `  provider         ${config.PROVIDER_BASE_URL}`
      : `  sandbox ledger   ${env.PROVIDER_BASE_URL}/sandbox/transactions (authorization: Bearer ` +
        `${env.PROVIDER_TOKEN === secrets.sandboxToken ? secrets.sandboxToken : '$PROVIDER_TOKEN'})`,
    ...(config.PROVIDER_BASE_URL
      ? []
      : [
          `  notifications    ${env.PROVIDER_BASE_URL}/merchant/notifications (what merchants were sent; same token; ` +
            '`npm run ops -- notifications list`)',
        ]),
    `  health           http://localhost:${config.PORT}/readyz`,
    `  metrics          http://${shownHost(config.METRICS_HOST)}:${config.METRICS_PORT}/metrics (server), ` +
      `http://${config.WORKER_METRICS_ADDRESS.replace(/^0\.0\.0\.0:/, 'localhost:')}/metrics (worker)`,
    ...generated.map((line) => `  ${line}`),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

void main();
