import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';
import { killOnExit } from './support/kill-on-exit';
import { CHROMIUM_PATH, requires } from './support/prerequisites';
import { freePort } from './support/redis-server';

/**
 * The Idempotency Center in a real browser: headless Chromium (Debian's `chromium`, driven by
 * playwright-core) loads the page the demo serves and finds the numbers of the demo's summary.
 * Without Chromium it is listed as not run (and fails under REQUIRE_ALL_CHECKS=1, as in CI).
 */
const browserCheck = requires('chromium');

function startDemo(port: number): { child: ChildProcess; output: () => string; summary: Promise<string> } {
  const env = { ...process.env };
  delete env.SQS_ENDPOINT;
  delete env.REDIS_URL;
  const child = spawn(
    process.execPath,
    [
      join(__dirname, '..', 'sample', 'start.mjs'),
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

browserCheck.describe('the Idempotency Center page of the demo', () => {
  // Whatever fails below, neither the demo (held up 60 s for the browser) nor Chromium outlives the spec.
  let demo: ReturnType<typeof startDemo> | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    demo?.child.kill('SIGKILL');
  });

  it('shows the numbers of the demo summary', async () => {
    const port = await freePort();
    demo = startDemo(port);
    demo.summary.catch(() => undefined); // awaited below; a launch failure must not leave it unhandled
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
      });
      const output = await demo.summary;
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${port}/idempotency/ui`);
      expect(await page.title()).toBe('Idempotency Center');
      const section = page.locator('section[data-event-type="order_created"]');
      const total = async (counter: string) =>
        Number(await section.locator(`td[data-total="${counter}"]`).textContent());
      expect(await total('handled')).toBe(summaryValue(output, 'handled once'));
      expect(await total('duplicates_completed')).toBe(
        summaryValue(output, 'duplicates acked, handler not run'),
      );
      expect(await total('duplicates_in_flight')).toBe(
        summaryValue(output, 'in-flight duplicates redelivered'),
      );
      expect(await total('failed')).toBe(summaryValue(output, 'failures (redelivered, retried)'));
      expect(await total('handled')).toBe(20);
      const heading = await section.locator('h2').textContent();
      expect(heading).toContain('covered');
      expect(heading).not.toContain('not covered');
      const row = section.locator('tr[data-handler="OrdersHandler.onOrderCreated"]');
      expect(await row.locator('td').nth(1).textContent()).toBe('yes');
      const json = await (await page.request.get(`http://127.0.0.1:${port}/idempotency`)).json();
      expect(json.scope).toBe('fleet');
    } finally {
      await browser?.close();
      browser = undefined;
      demo.child.kill('SIGTERM');
    }
  }, 90_000);
});
