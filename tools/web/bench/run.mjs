// SPDX-License-Identifier: MIT
// Opens URL (tools/web/bench.html) in headless Chromium (Debian's /usr/bin/chromium, or
// $CHROMIUM) through playwright-core, waits for window.benchResult and prints it as JSON.
// Usage: node run.mjs URL   (scripts/web-bench.sh runs it)
import { chromium } from 'playwright-core';

const url = process.argv[2];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction(() => window.benchResult !== undefined, null, { timeout: 120000 });
  const result = await page.evaluate(() => window.benchResult);
  result.consoleErrors = errors;
  console.log(JSON.stringify(result));
} finally {
  await browser.close();
}
