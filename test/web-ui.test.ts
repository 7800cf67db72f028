import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { artifactPath, launchChromium } from './support/browser';
import { freePort } from '../src/local/free-port';
import { merchantApi, startSystem, stopSystem } from './support/npm-start';
import { paymentRequest } from './support/request-builders';

// A real headless Chromium against `npm start`'s stack: an operator sets the Web UI's codec endpoint to the
// expiring URL `npm start` printed, finds the payment in review with its decoded summary and details, and a payer
// approves a card payment on the sandbox's 3-D Secure page.

const dataDir = mkdtempSync(join(tmpdir(), 'web-ui-test-'));
// The merchant's page the payer returns to after 3-D Secure.
const merchantSite = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Thank you for your order</h1>');
});
let system: ChildProcess | undefined;
let browser: Browser | undefined;
let page: Page;
let uiUrl: string;
/** The expiring, decode-only codec URL `npm start` printed for the operator. */
let codecUrl: string;
let api: ReturnType<typeof merchantApi>;

before(async () => {
  await new Promise<void>((resolve) => merchantSite.listen(0, '127.0.0.1', resolve));
  const ports = { PORT: await freePort(), TEMPORAL_UI_PORT: await freePort() };
  const started = await startSystem({
    DATA_DIR: dataDir,
    PORT: String(ports.PORT),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(ports.TEMPORAL_UI_PORT),
    SANDBOX_PORT: String(await freePort()),
    SANDBOX_CALLBACK_DELAY: '200ms',
    CALLBACK_TIMEOUT_MOBILE_MONEY: '1s',
    CALLBACK_TIMEOUT_CARD: '1h',
    RECONCILE_FOR: '2s',
    RECONCILE_INTERVAL: '500ms',
    LOG_LEVEL: 'warn',
  });
  system = started.child;
  uiUrl = `http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`;
  const key = /merchant key \(merchant "demo"\): (\S+)/.exec(started.output())?.[1];
  assert.ok(key, started.output());
  codecUrl = /Web UI decoding[^\n]*\n\s+(http\S+)/.exec(started.output())?.[1] ?? '';
  assert.match(codecUrl, /\/codec\/ui\/[^/]+$/, started.output());
  api = merchantApi(`http://127.0.0.1:${ports.PORT}`, key);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
});

after(async () => {
  await browser?.close();
  if (system) await stopSystem(system);
  merchantSite.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it("the operator pastes the codec URL npm start printed into the Web UI's Codec Server settings", async () => {
  // The UI itself hands no codec credential to its browsers: the endpoint lives in this browser only.
  const settings = await fetch(`${uiUrl}/api/v1/settings`);
  assert.equal(((await settings.json()) as { Codec: { Endpoint: string } }).Codec.Endpoint, '');
  await page.goto(`${uiUrl}/namespaces/default/workflows`);
  await page.getByTestId('data-encoder-status').click();
  const dialog = page.locator('#data-encoder-settings');
  await dialog.getByText('Use my browser setting').click();
  await dialog.locator('#data-encoder-endpoint-input').fill(codecUrl);
  await page.screenshot({ path: artifactPath('web-ui', '0-codec-server-settings.png') });
  await dialog.getByTestId('confirm-modal-button').click();
  assert.equal(await page.evaluate('localStorage.getItem("endpoint")'), JSON.stringify(codecUrl));
});

it('the Web UI finds the payment left in review by PaymentStatus and shows its summary and details', async () => {
  const request = paymentRequest('mobile_money_debit', '33'); // never calls back, status query stays pending
  const created = await api.api('POST', '/v1/payments', request);
  assert.equal(created.status, 201);
  await api.waitFor(created.body.id, 'needs_review');

  await page.goto(`${uiUrl}/namespaces/default/workflows`);
  await page.getByTestId('toggle-manual-query').click();
  const query = page.getByTestId('workflow-manual-search-input');
  await query.fill('PaymentStatus="needs_review"');
  await query.press('Enter');
  const row = page.getByRole('link', { name: created.body.id, exact: true });
  await row.waitFor({ timeout: 20_000 });
  await page.screenshot({ path: artifactPath('web-ui', '1-needs-review-list.png') });

  await row.click();
  // The timeline names each activity and timer by its summary; a local activity (the initiation, a record write) by its
  // type, as the Web UI shows markers.
  await page.getByText('initiatePayment', { exact: true }).first().waitFor({ timeout: 20_000 });
  await page.getByText('wait for callback (1s)').waitFor();
  await page.getByText('checkPaymentStatus • status check 1').waitFor();
  await page.screenshot({ path: artifactPath('web-ui', '2-payment-timeline.png') });
  await page.getByTestId('user-metadata-tab').click();
  // The UI renders summary and details as Markdown, each in its own sandboxed frame.
  const shown = (part: string) => page.frameLocator(`#user-metadata-${part}`).locator('body');
  await shown('summary').getByText(`mobile money debit 12.5 · ${request.reference}`).waitFor({ timeout: 20_000 });
  assert.match(await shown('details').innerText(), new RegExp(`merchant demo, reference ${request.reference}`));
  const current = await shown('current-details').innerText();
  assert.match(current, /status: needs_review, updated /);
  assert.match(current, /last event: needs_review · reconciliation could not settle the payment/);
  await page.screenshot({ path: artifactPath('web-ui', '3-payment-summary.png') });
});

it("a card payment's 3-D Secure page approves it, returns the payer to the merchant, and the payment succeeds", async () => {
  const returnUrl = `http://127.0.0.1:${(merchantSite.address() as AddressInfo).port}/return`;
  const created = await api.api('POST', '/v1/payments', {
    ...paymentRequest('card_payment', '00'),
    return_url: returnUrl,
  });
  assert.equal(created.status, 201);
  // Under load the answer may come before the initiation step ("initiating"); the redirect comes with "pending".
  const pending = await api.waitFor(created.body.id, 'pending');
  const redirect = pending.next_action?.url;
  assert.ok(redirect, JSON.stringify(pending));

  await page.goto(redirect);
  await page.getByText('3-D Secure check').first().waitFor();
  await page.screenshot({ path: artifactPath('web-ui', '4-three-ds-page.png') });
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL((url) => url.href.startsWith(returnUrl));
  assert.equal(await page.locator('h1').innerText(), 'Thank you for your order');
  await page.screenshot({ path: artifactPath('web-ui', '5-returned-to-merchant.png') });

  const payment = await api.waitFor(created.body.id, 'succeeded');
  // The callback settled it once the status query agreed (a callback is a hint).
  assert.ok(payment.events.some((e) => e.type === 'callback_confirmed' && e.outcome === 'succeeded'));
});
