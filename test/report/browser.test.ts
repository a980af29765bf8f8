import assert from 'node:assert/strict';
import { test } from 'node:test';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { summarize } from '../../src/metrics/summary.ts';
import { buildComparisonReport } from '../../src/report/compare.ts';
import { buildRunReport } from '../../src/report/run-report.ts';
import { simulate } from '../../src/sim/simulator.ts';
import { smallComparison, tierScenario } from './fixture.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

test('report.html opens in headless Chromium with every chart rendered, no console error and no network request', async (t) => {
  // Never skipped: a missing browser is a broken environment, not a pass.
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: run .ci/browser-deps.sh (installs Debian's chromium) and rerun this test`);
  const dir = mkdtempSync(join(tmpdir(), 'llmfleet-browser-'));
  const { setup, results } = await smallComparison();
  const sc = tierScenario();
  const res = simulate(sc, '.', { mode: 'fast' });
  const pages = {
    comparison: await buildComparisonReport(setup, results, 'node bin/llmfleet.js compare'),
    run: await buildRunReport({ scenario: sc, summary: summarize(res, 0), log: res.log, timeline: res.timeline, command: 'node bin/llmfleet.js simulate' }),
  };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    for (const [name, html] of Object.entries(pages)) {
      const file = join(dir, `${name}.html`);
      writeFileSync(file, html);
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
      });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('request', (r) => {
        if (!r.url().startsWith('file:')) requests.push(r.url());
      });
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      const figures = await page.$$eval('figure.chart', (els) =>
        els.map((f) => {
          const svg = f.querySelector('svg');
          const r = svg?.getBoundingClientRect();
          return { id: f.id, width: r?.width ?? 0, height: r?.height ?? 0, marks: svg ? svg.querySelectorAll('path, rect, line').length : 0 };
        }),
      );
      const expected = name === 'comparison' ? 9 : 8;
      assert.equal(figures.length, expected, `${name}: ${figures.map((f) => f.id).join(', ')}`);
      for (const f of figures) {
        assert.ok(f.width > 100 && f.height > 100, `${name} ${f.id} renders at ${f.width}×${f.height}`);
        assert.ok(f.marks > 5, `${name} ${f.id} draws ${f.marks} marks`);
      }
      assert.deepEqual(errors, [], `${name}: console errors`);
      assert.deepEqual(requests, [], `${name}: network requests`);
      const shot = join(tmpdir(), `llmfleet-report-${name}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      assert.ok(statSync(shot).size > 10_000);
      t.diagnostic(`screenshot: ${shot}`);
      await page.close();
    }
  } finally {
    await browser.close();
  }
});
