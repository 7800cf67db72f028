import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MockAgent } from 'undici';
import { BankDirectory } from '../src/banks/directory';
import type { Bank } from '../src/domain/bank';
import { createProviderClient } from '../src/provider/provider-client';
import { parseBankList } from '../src/provider/provider-banks';
import { ProviderError } from '../src/provider/provider-errors';

const BASE = 'http://provider.test';
const config = {
  baseUrl: BASE,
  mobileMoneyBaseUrl: BASE,
  token: 'tok_SECRET_banks',
  connectTimeoutMs: 1000,
  requestTimeoutMs: 1000,
  safeRetries: 0,
};

describe('the provider bank list', () => {
  it('is read tolerantly: bare or wrapped, numeric codes, unusable entries skipped', () => {
    assert.deepEqual(parseBankList([{ code: 'GH01', name: 'One' }, { code: 2 }, { name: 'no code' }]), [
      { code: 'GH01', name: 'One' },
      { code: '2', name: '2' },
    ]);
    assert.deepEqual(parseBankList({ data: [{ code: 'A1', name: 'A', swift: 'X' }] }), [{ code: 'A1', name: 'A' }]);
    assert.deepEqual(parseBankList({ banks: [] }), []);
    assert.equal(parseBankList({ status: 'ok' }), undefined);
  });

  it('is fetched with the bearer token from a configurable address', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    let authorization: unknown;
    agent
      .get(BASE)
      .intercept({ path: '/custom/banks', method: 'GET' })
      .reply((opts) => {
        authorization = (opts.headers as Record<string, string>).authorization;
        return { statusCode: 200, data: [{ code: 'GH030100', name: 'GCB Bank' }] };
      });
    agent.get(BASE).intercept({ path: '/api/banks', method: 'GET' }).reply(500, 'down');
    const custom = createProviderClient({ ...config, banksUrl: '/custom/banks' }, { dispatcher: agent });
    assert.deepEqual(await custom.listBanks(), [{ code: 'GH030100', name: 'GCB Bank' }]);
    assert.equal(authorization, `Bearer ${config.token}`);
    const standard = createProviderClient(config, { dispatcher: agent });
    await assert.rejects(standard.listBanks(), (err: unknown) => err instanceof ProviderError);
  });
});

describe('BankDirectory', () => {
  function directory(load: () => Promise<Bank[]>) {
    let now = 0;
    const failures: unknown[] = [];
    const banks = new BankDirectory({
      load,
      refreshMs: 60_000,
      now: () => now,
      onRefreshFailed: (err) => failures.push(err),
    });
    return { banks, failures, advance: (ms: number) => (now += ms) };
  }

  it('fetches once, shares concurrent loads, and refreshes after the interval', async () => {
    let loads = 0;
    const { banks, advance } = directory(() => {
      loads += 1;
      return Promise.resolve([{ code: `B${loads}`, name: 'Bank' }]);
    });
    const [a, b] = await Promise.all([banks.knownCodes(), banks.knownCodes()]);
    assert.equal(loads, 1);
    assert.ok(a.has('B1') && b.has('B1'));
    advance(59_000);
    assert.ok((await banks.knownCodes()).has('B1'));
    advance(2_000);
    assert.ok((await banks.knownCodes()).has('B2'));
    assert.equal(loads, 2);
  });

  it('keeps the last list when a refresh fails, and fails only when it never had one', async () => {
    let fail = true;
    const { banks, failures, advance } = directory(() =>
      fail ? Promise.reject(new Error('provider down')) : Promise.resolve([{ code: 'OK1', name: 'Bank' }]),
    );
    await assert.rejects(banks.knownCodes(), /provider down/);
    fail = false;
    assert.ok((await banks.knownCodes()).has('OK1'));
    fail = true;
    advance(61_000);
    assert.ok((await banks.knownCodes()).has('OK1'));
    assert.equal(failures.length, 1);
  });
});
