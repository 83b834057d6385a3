import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { deferred, orderCreated } from './fixtures/orders.fixture';
import { CenterApp, serveCenterApp } from './support/center-app';
import { killOnExit } from './support/kill-on-exit';
import { CHROMIUM_PATH, requires } from './support/prerequisites';
import { freePort } from './support/redis-server';
import { waitFor } from './support/wait-for';

/**
 * The Idempotency Center in a real browser: headless Chromium (Debian's `chromium`, driven by
 * playwright-core) loads the page the demo serves and finds the numbers of the demo's summary, its
 * chart, its failures and a key lookup; then, on an app the spec drives, an in-flight key and a
 * hostile key. Screenshots go to test-output/ (gitignored); `UPDATE_DOCS_SCREENSHOT=1` also copies
 * the demo's to docs/center.png, the README's picture. Without Chromium it is listed as not run
 * (and fails under REQUIRE_ALL_CHECKS=1, as in CI).
 */
const browserCheck = requires('chromium');
const ROOT = join(__dirname, '..');
const OUTPUT = join(ROOT, 'test-output');
const HOSTILE = '<img src=x onerror=alert(1)>';

function startDemo(port: number): { child: ChildProcess; output: () => string; summary: Promise<string> } {
  const env = { ...process.env };
  delete env.SQS_ENDPOINT;
  delete env.REDIS_URL;
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'sample', 'start.mjs'),
      '--orders',
      '20',
      '--center-port',
      String(port),
      '--center-hold',
      '60',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  killOnExit(child);
  let output = '';
  const summary = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('The Idempotency Center stays up')) resolve(output);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) =>
      reject(new Error(`the demo exited (${code}) before serving its summary:\n${output}`)),
    );
  });
  return { child, output: () => output, summary };
}

function summaryValue(output: string, label: string): number {
  const match = new RegExp(`${label.replace(/[()]/g, '\\$&')}\\s+(\\d+)\\n`).exec(output);
  if (!match) throw new Error(`no "${label}" in the summary:\n${output}`);
  return Number(match[1]);
}

function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A page that records what the Center must never cause: a dialog (an injected script ran), a
 * Content-Security-Policy violation (the page needs something its own policy forbids), a console error.
 */
async function watchedPage(browser: Browser, headers?: Record<string, string>) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  if (headers) await page.setExtraHTTPHeaders(headers);
  const problems: string[] = [];
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) {
      problems.push(`console ${message.type()}: ${message.text()}`);
    }
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return { page, problems };
}

/** The whole page, or (`height`) its top `height` pixels whatever the scroll position. */
async function screenshot(page: Page, name: string, height?: number): Promise<string> {
  mkdirSync(OUTPUT, { recursive: true });
  const path = join(OUTPUT, name);
  const clip = height === undefined ? undefined : { x: 0, y: 0, width: 1280, height };
  await page.screenshot({ path, fullPage: true, clip });
  return path;
}

browserCheck.describe('the Idempotency Center page of the demo', () => {
  // Whatever fails below, neither the demo (held up 60 s for the browser) nor Chromium outlives the spec.
  let demo: ReturnType<typeof startDemo> | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    demo?.child.kill('SIGKILL');
  });

  it('shows the numbers, the chart, the failures and a completed key of the demo run', async () => {
    const port = await freePort();
    const started = Date.now();
    demo = startDemo(port);
    demo.summary.catch(() => undefined); // awaited below; a launch failure must not leave it unhandled
    try {
      browser = await launchChromium();
      const output = await demo.summary;
      const ended = Date.now();
      const { page, problems } = await watchedPage(browser);
      const base = `http://127.0.0.1:${port}/idempotency`;
      const response = await page.goto(`${base}/ui`);
      expect(response!.headers()['content-security-policy']).toMatch(
        /^default-src 'none'; style-src 'sha256-/,
      );
      expect(await page.title()).toBe('Idempotency Center');

      // The counters, as before.
      const section = page.locator('section[data-event-type="order_created"]');
      const total = async (counter: string) =>
        Number(await section.locator(`td[data-total="${counter}"]`).textContent());
      const handled = summaryValue(output, 'handled once');
      const duplicates = summaryValue(output, 'duplicates acked, handler not run');
      const inFlight = summaryValue(output, 'in-flight duplicates redelivered');
      const failures = summaryValue(output, 'failures (redelivered, retried)');
      expect(handled).toBe(20);
      expect(await total('handled')).toBe(handled);
      expect(await total('duplicates_completed')).toBe(duplicates);
      expect(await total('duplicates_in_flight')).toBe(inFlight);
      expect(await total('failed')).toBe(failures);
      const heading = await section.locator('h2').textContent();
      expect(heading).toContain('covered');
      expect(heading).not.toContain('not covered');
      const row = section.locator('tr[data-handler="OrdersHandler.onOrderCreated"]');
      expect(await row.locator('td').nth(1).textContent()).toBe('yes');

      // The last hour at a glance, and the chart: the run's minute(s) hold its records.
      const tile = async (name: string) =>
        Number(await page.locator(`[data-last-hour="${name}"] b`).textContent());
      expect(await tile('handled')).toBe(handled);
      expect(await tile('duplicates')).toBe(duplicates + inFlight);
      expect(await tile('failed')).toBe(failures);
      const bars = await section.locator('svg.trend g[data-minute]').evaluateAll((groups) =>
        groups.map((g) => ({
          minute: Date.parse(g.getAttribute('data-minute')!),
          handled: Number(g.getAttribute('data-handled')),
          failed: Number(g.getAttribute('data-failed')),
        })),
      );
      expect(bars.length).toBeGreaterThanOrEqual(1);
      for (const bar of bars) {
        expect(bar.minute).toBeGreaterThanOrEqual(Math.floor(started / 60_000) * 60_000);
        expect(bar.minute).toBeLessThanOrEqual(ended);
      }
      expect(bars.reduce((sum, bar) => sum + bar.handled, 0)).toBe(handled);
      expect(bars.reduce((sum, bar) => sum + bar.failed, 0)).toBe(failures);

      // The recent failures, with their reasons.
      const failureRows = section.locator('table[data-records="failures"] tr[data-recent]');
      expect(await failureRows.count()).toBe(failures);
      for (const reason of await failureRows.locator('[data-reason]').allTextContents()) {
        expect(reason).toMatch(/^warehouse busy, order order-\d+ not shipped$/);
      }

      // A completed key: follow the key of a recent duplicate to its lookup.
      const keyLink = section.locator('table[data-records="repeats"] [data-key] a').first();
      const key = (await keyLink.textContent())!;
      await keyLink.click();
      await page.waitForURL(/[?&]key=/);
      const result = page.locator('[data-lookup-result]');
      expect(await result.locator('[data-lookup-key]').textContent()).toBe(key);
      expect(await result.locator('[data-state]').textContent()).toBe('COMPLETED');
      expect(await result.locator('[data-expires-in]').textContent()).toMatch(/^23 h 59 min$/);
      expect(await result.locator('tr[data-recent]').count()).toBeGreaterThanOrEqual(1);

      await screenshot(page, 'center-demo.png');
      const readme = await screenshot(page, 'center-readme.png', 1_400);
      expect(statSync(readme).size).toBeLessThan(300 * 1024);
      if (process.env.UPDATE_DOCS_SCREENSHOT === '1') copyFileSync(readme, join(ROOT, 'docs', 'center.png'));

      const json = await (await page.request.get(`${base}`)).json();
      expect(json.scope).toBe('fleet');
      const overview = await (await page.request.get(`${base}/api/v1/overview`)).json();
      expect(overview).toMatchObject({ apiVersion: 1, activityScope: 'fleet', lastHour: { handled } });
      expect(problems).toEqual([]);
    } finally {
      await browser?.close();
      browser = undefined;
      demo.child.kill('SIGTERM');
    }
  }, 90_000);
});

browserCheck.describe('the Idempotency Center page of an app in flight', () => {
  let served: CenterApp | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    await served?.close();
  });

  it('looks up a key in flight, and shows a hostile key as text', async () => {
    served = await serveCenterApp();
    const { sqs, ledger } = served;
    const base = `${served.base}/idempotency/ui`;

    ledger.script.set(`order-${HOSTILE}`, 'fail');
    await sqs.send(orderCreated(HOSTILE));
    const gate = deferred();
    ledger.script.set('order-slow-1', gate.promise);
    const inFlight = sqs.send(orderCreated('slow-1'));
    await waitFor(() => ledger.calls === 2, 30_000, 'the slow handler call');

    browser = await launchChromium();
    const { page, problems } = await watchedPage(browser, { 'x-admin': 'yes' });

    // The in-flight key, through the page's own form.
    await page.goto(base);
    await page.locator('select[name="type"]').selectOption('order_created');
    await page.locator('input[name="key"]').fill('slow-1');
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(/[?&]key=slow-1/);
    const result = page.locator('[data-lookup-result]');
    expect(await result.locator('[data-state]').textContent()).toBe('IN_PROGRESS');
    expect(await result.locator('[data-lease-left]').textContent()).toMatch(/^(2\d|30)\.\d s$/);
    await screenshot(page, 'center-in-flight.png');

    // The hostile key: typed into the form, it comes back as text, in the lookup and in the failures.
    await page.locator('input[name="key"]').fill(HOSTILE);
    await page.locator('button[type="submit"]').click();
    await page.waitForURL(/[?&]key=%3Cimg/);
    expect(await result.locator('[data-lookup-key]').textContent()).toBe(HOSTILE);
    expect(await result.locator('[data-state]').textContent()).toBe('UNKNOWN'); // released after the failure
    const failure = page.locator(
      'section[data-event-type="order_created"] table[data-records="failures"] tr[data-recent]',
    );
    expect(await failure.locator('[data-key]').textContent()).toBe(HOSTILE);
    expect(await failure.locator('[data-reason]').textContent()).toBe(`shipping order-${HOSTILE} failed`);
    expect(await page.locator('input[name="key"]').inputValue()).toBe(HOSTILE);
    expect(await page.locator('img').count()).toBe(0);
    await screenshot(page, 'center-hostile-key.png');
    expect(problems).toEqual([]);

    gate.resolve();
    await inFlight;
    await page.goto(`${base}?type=order_created&key=slow-1`);
    expect(await result.locator('[data-state]').textContent()).toBe('COMPLETED');
  }, 60_000);
});
