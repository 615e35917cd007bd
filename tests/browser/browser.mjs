// browser.mjs -- a real browser for the UI tests: Debian's chromium driven
// by playwright-core, headless, with a fresh profile and no network beyond
// loopback.  Every page is guarded: a console error, an uncaught exception,
// a failed request, an error status nobody expected or an alert() fails the
// test that caused it (guard.check()).  axe-core checks accessibility.
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { ROOT } from '../js/helpers.mjs';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export const SHOTS = path.join(ROOT, 'tests/browser/screenshots');
const CHROMIUM = process.env.SMRITI_CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  const profile = mkdtempSync(path.join(tmpdir(), 'smriti-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  mkdirSync(SHOTS, { recursive: true });
  browser.cleanup = async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return browser;
}

// A new guarded page.  guard.expect(status, urlPart) allows one kind of
// error answer that a test provokes on purpose (a 409 conflict, a 502).
export async function guardedPage(browser, { origin } = {}) {
  const page = await browser.newPage();
  const problems = [];
  const allowed = [];
  const isAllowed = (status, url) => allowed.some((a) => a.status === status && url.includes(a.part));
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const st = m.text().match(/status of (\d+)/);
    if (st && allowed.some((a) => a.status === Number(st[1]))) return;
    problems.push(`console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`uncaught: ${e.message}`));
  let reloading = false;
  page.on('requestfailed', (r) => {
    // A reload cancels what the old page had in flight; that is the reload, not a fault.
    if (reloading && r.failure()?.errorText === 'net::ERR_ABORTED') return;
    // Chromium reports a fetch whose body a script reads with a stream reader,
    // yielding between reads, as ERR_ABORTED once it is read whole (any URL,
    // even /openapi.json); the UI reads replies that way.
    if (r.failure()?.errorText === 'net::ERR_ABORTED'
      && (r.url().includes('/v4/generations/') || r.url().endsWith('/v4/chat/send')
        || /\/v4\/sessions\/[^/]+\/(edit|regenerate|continue)$/.test(r.url()))) return;
    // The UI cancels its question to /v4/changes when the view changes (app.js, follow):
    // the long poll, or the first question of a page, which has no version to wait on yet.
    if (r.failure()?.errorText === 'net::ERR_ABORTED' && /\/v4\/changes(\?|$)/.test(r.url())) return;
    problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !isAllowed(r.status(), r.url())) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on('dialog', (d) => { problems.push(`a script opened a ${d.type()}: ${d.message()}`); d.dismiss(); });
  if (origin) await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  page.guard = {
    expect(status, part) { allowed.push({ status, part }); },
    async reload() {
      reloading = true;
      try { await page.reload(); } finally { reloading = false; }
    },
    check() {
      const p = problems.splice(0);
      allowed.splice(0);
      assert.deepEqual(p, [], p.join('\n'));
    },
  };
  return page;
}

// No serious or critical axe violation on the page as it is now.
export async function axe(page, what) {
  await page.evaluate(AXE);
  const r = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  const bad = r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => `${v.id} (${v.impact}): ${v.help} -- ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`), [],
    `accessibility of ${what}`);
}

export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}
