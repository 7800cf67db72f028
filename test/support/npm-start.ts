import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { request } from 'undici';
import type { PaymentResource, PaymentStatus } from '../../src/domain/payment-model';
import { eventually } from '../../src/local/eventually';
import { waitUntil } from '../../src/local/wait-until';

export interface StartedSystem {
  child: ChildProcess;
  output(): string;
}

/** Runs `src/start.ts` (what `npm start` runs) with the given environment and waits for its "is running" banner. */
export async function startSystem(env: Record<string, string>): Promise<StartedSystem> {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', '..', 'src', 'start.ts')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const failed = () => {
    child.kill('SIGKILL');
    return new Error(`npm start did not come up:\n${output}`);
  };
  await waitUntil(() => Promise.resolve(output.includes('is running') ? true : undefined), {
    timeoutMs: 90_000,
    stopIf: () => (child.exitCode !== null ? failed() : undefined),
    timedOut: failed,
  });
  return { child, output: () => output };
}

/** Stops it as Ctrl-C does (SIGKILL after 30 s); resolves to its exit code. */
export async function stopSystem(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

/** The merchant API of a started system, with one key, and a wait for a payment's status. */
export function merchantApi(baseUrl: string, key: string) {
  const api = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
    const response = await request(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.statusCode, body: (await response.body.json()) as PaymentResource };
  };
  const waitFor = async (id: string, status: PaymentStatus, timeoutMs = 30_000) => {
    return eventually(
      async () => {
        const payment = (await api('GET', `/v1/payments/${id}`)).body;
        assert.equal(payment.status, status, `${id} is ${payment.status}, not ${status}`);
        return payment;
      },
      { timeoutMs, what: `payment ${id} ${status}` },
    );
  };
  return { api, waitFor };
}
