import { parseDuration } from '../domain/duration';
import type { SandboxOptions } from './sandbox-app';

/** A bad environment variable, named in the message. */
export class SandboxEnvError extends Error {}

function duration(env: NodeJS.ProcessEnv, name: string, fallback: string): number {
  const text = env[name] ?? fallback;
  const ms = parseDuration(text);
  if (ms === undefined) throw new SandboxEnvError(`${name}: "${text}" is not a duration like 500ms, 30s, 5m`);
  return ms;
}

function nonEmpty(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const text = env[name];
  if (text === undefined) return undefined;
  if (text.trim() === '') throw new SandboxEnvError(`${name} is set but empty`);
  return text.trim();
}

/** Reads and validates the sandbox's SANDBOX_* environment variables. */
export function sandboxOptionsFromEnv(env: NodeJS.ProcessEnv): SandboxOptions {
  const portText = env.SANDBOX_PORT ?? '4010';
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new SandboxEnvError(`SANDBOX_PORT: "${portText}" is not a port (0-65535)`);

  const auto3ds = nonEmpty(env, 'SANDBOX_AUTO_3DS');
  if (auto3ds !== undefined && auto3ds !== 'approve' && auto3ds !== 'decline') {
    throw new SandboxEnvError(`SANDBOX_AUTO_3DS: "${auto3ds}" is neither approve nor decline`);
  }

  const publicUrl = nonEmpty(env, 'SANDBOX_PUBLIC_URL');
  if (publicUrl !== undefined && !/^https?:\/\/[^/\s]+/.test(publicUrl)) {
    throw new SandboxEnvError(`SANDBOX_PUBLIC_URL: "${publicUrl}" is not an http(s) URL`);
  }

  const logText = nonEmpty(env, 'SANDBOX_LOG') ?? 'false';
  if (logText !== 'true' && logText !== 'false') {
    throw new SandboxEnvError(`SANDBOX_LOG: "${logText}" is neither true nor false`);
  }

  return {
    host: nonEmpty(env, 'SANDBOX_HOST') ?? '127.0.0.1',
    port,
    token: nonEmpty(env, 'SANDBOX_TOKEN') ?? 'sandbox-token',
    callbackDelayMs: duration(env, 'SANDBOX_CALLBACK_DELAY', '1s'),
    auto3ds,
    slowResponseMs: duration(env, 'SANDBOX_SLOW_RESPONSE', '30s'),
    publicUrl,
    dataFile: nonEmpty(env, 'SANDBOX_DATA_FILE'),
    logger: logText === 'true',
    notificationSecrets: (nonEmpty(env, 'SANDBOX_NOTIFICATION_SECRETS') ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  };
}
