// The report in a real browser: Chromium (the system package) driven headless by playwright-core
// opens a rendered run directory's report.html, offline, and checks that
//   - every plot the report promises is there and drew,
//   - each named layer drew one mark per row of its dataset, and the counts agree with the
//     records in results.json (so a plot that silently drops or invents points fails),
//   - a tooltip shows the fields of the record under the pointer,
//   - the console shows no error and the page asked for nothing over the network,
// and saves a screenshot.
//
// Environment: SMR_REPORT_DIR (the rendered run directory; required), SMR_RESULTS (its
// results.json; default SMR_REPORT_DIR/results.json), SMR_CHROMIUM (default: chromium on PATH),
// SMR_SCREENSHOT (default SMR_REPORT_DIR/report-screenshot.png).
// Run: tests/browser/run-browser-test (ctest: report_browser), or
//      SMR_REPORT_DIR=DIR node --test web/test/report.test.mjs
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

const kPlots = ['roofline', 'bandwidth', 'traffic_ratio', 'time'];
// The layer whose points carry tooltips, per plot.
const kTooltipLayer = { roofline: 'measured', bandwidth: 'bandwidth', traffic_ratio: 'measured_ratio', time: 'time' };
const kChromiumArgs = [
  '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic',
];

const dir = process.env.SMR_REPORT_DIR;
if (!dir) throw new Error('SMR_REPORT_DIR is not set: point it at a rendered run directory');
const reportFile = path.resolve(dir, 'report.html');
const resultsFile = process.env.SMR_RESULTS || path.join(dir, 'results.json');
// Debian's chromium package, found on PATH unless SMR_CHROMIUM names it.
const onPath = (name) =>
  (process.env.PATH || '').split(path.delimiter).filter(Boolean).map((dir) => path.join(dir, name)).find(existsSync);
const executablePath = process.env.SMR_CHROMIUM || onPath('chromium');
if (!executablePath) throw new Error('Chromium not found: install the chromium package or set SMR_CHROMIUM');
const screenshot = process.env.SMR_SCREENSHOT || path.join(dir, 'report-screenshot.png');

const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
const specs = Object.fromEntries(
  kPlots.filter((s) => existsSync(path.join(dir, `${s}.vl.json`)))
    .map((s) => [s, JSON.parse(readFileSync(path.join(dir, `${s}.vl.json`), 'utf8'))]));

// ---- what the records say each plot must draw (independent of the C++ that made the specs) ----

const positive = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0;
const ok = results.records.filter((r) => r.status === 'ok');
const timed = ok.filter((r) => r.time && positive(r.time.median_s));
const counters = (r) => r.counters || {};
const dramBytes = (r) => {
  const c = counters(r);
  if (positive(c.dram_bytes)) return c.dram_bytes;
  const [rd, wr] = [c['dram__bytes_read.sum'], c['dram__bytes_write.sum']];
  return positive(rd) && positive(wr) ? rd + wr : undefined;
};
const l2Bytes = (r) => {
  const c = counters(r);
  if (positive(c.l1_l2_bytes)) return c.l1_l2_bytes;
  return positive(c['lts__t_sectors_srcunit_tex.sum']) ? 32 * c['lts__t_sectors_srcunit_tex.sum'] : undefined;
};
const l1Bytes = (r) => (positive(counters(r)['l1tex__t_bytes.sum']) ? counters(r)['l1tex__t_bytes.sum'] : undefined);
const onRoofline = timed.filter((r) => positive(r.model.flops));
const pairKey = (r) => [r.dtype, r.M, r.N, r.ld_x, r.ld_y].join('/');
const fusedBy = new Map(ok.filter((r) => r.kernel === 'fused').map((r) => [pairKey(r), r]));
const pairs = ok.filter((r) => r.kernel === 'unfused' && fusedBy.has(pairKey(r))).map((r) => [r, fusedBy.get(pairKey(r))]);

const fromRecords = {
  roofline: {
    measured: onRoofline.reduce((n, r) => n + [dramBytes(r), l2Bytes(r), l1Bytes(r)].filter(positive).length, 0),
    model: onRoofline.filter((r) => positive(r.model.dram_bytes) && positive(r.model.bound_time_s)).length,
  },
  bandwidth: { bandwidth: ok.filter((r) => positive(r.effective_GBps)).length },
  traffic_ratio: {
    measured_ratio: pairs.filter(([u, f]) => positive(dramBytes(u)) && positive(dramBytes(f))).length,
    time_ratio: pairs.filter(([u, f]) => timed.includes(u) && timed.includes(f)).length,
  },
  time: { time: timed.length, time_lines: timed.length },
};

// ---- the browser ------------------------------------------------------------------------------

let context, page, userDataDir;
const consoleErrors = [];
const consoleWarnings = [];
const externalRequests = [];
let marks = {};      // plot -> layer name -> marks drawn
let viewNames = [];  // plots whose view exists

before(async () => {
  assert.ok(existsSync(reportFile), `${reportFile} is missing: render the run first (scripts/render-report)`);
  userDataDir = mkdtempSync(path.join(os.tmpdir(), 'smr-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath, headless: true, args: kChromiumArgs, viewport: { width: 1280, height: 900 },
  });
  page = context.pages()[0] || (await context.newPage());
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
    if (m.type() === 'warning') consoleWarnings.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`uncaught: ${e.message}`));
  // Offline: anything but the report file itself is refused and remembered.
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url === pathToFileURL(reportFile).href) return route.continue();
    externalRequests.push(url);
    return route.abort();
  });
  await page.goto(pathToFileURL(reportFile).href);
  await page.waitForFunction(() => window.smrReady !== undefined, null, { timeout: 60_000 });
  viewNames = await page.evaluate(() => window.smrReady);
  marks = await page.evaluate(() => {
    // Items of every named mark in a view's scenegraph: Vega-Lite names a layer's marks
    // "<layer>_marks"; a line is drawn per group, so its items are summed over the groups.
    const count = (node, out) => {
      if (node.marktype) {
        if (node.name && node.name.endsWith('_marks'))
          out[node.name.slice(0, -'_marks'.length)] = (out[node.name.slice(0, -'_marks'.length)] || 0) + node.items.length;
        for (const item of node.items) for (const child of item.items || []) count(child, out);
      }
      return out;
    };
    return Object.fromEntries(Object.entries(window.smrViews).map(([k, v]) => [k, count(v.scenegraph().root, {})]));
  });
});

after(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
});

test('every plot has its spec and drew a chart', () => {
  for (const plot of kPlots) {
    assert.ok(specs[plot], `${plot}.vl.json is missing from ${dir}`);
    assert.ok(viewNames.includes(plot), `report.html has no rendered chart for ${plot} (charts: ${viewNames.join(', ') || 'none'})`);
  }
});

test('each layer drew one mark per row of its data', () => {
  for (const [plot, spec] of Object.entries(specs)) {
    for (const layer of spec.layer) {
      const rows = spec.datasets[layer.data.name].length;
      assert.equal(marks[plot]?.[layer.name] ?? 0, rows, `${plot}: layer ${layer.name} drew ${marks[plot]?.[layer.name]} marks for ${rows} rows`);
    }
  }
});

test('the marks agree with the records in results.json', () => {
  let checked = 0;
  for (const [plot, layers] of Object.entries(fromRecords)) {
    for (const [layer, expected] of Object.entries(layers)) {
      assert.equal(marks[plot]?.[layer] ?? 0, expected, `${plot}: layer ${layer} drew ${marks[plot]?.[layer]} marks; the records call for ${expected}`);
      checked += expected;
    }
  }
  assert.ok(checked > 0, 'the run has no record to draw: this test needs a run with data');
});

test('a tooltip shows the fields of the record under the pointer', async () => {
  for (const [plot, layer] of Object.entries(kTooltipLayer)) {
    if (!marks[plot]?.[layer]) continue;  // nothing drawn there (checked above)
    const point = page.locator(`#vis-${plot} g.${layer}_marks > path`).first();
    await point.scrollIntoViewIfNeeded();
    const box = await point.boundingBox();
    assert.ok(box, `${plot}: no point of ${layer} on the page`);
    await page.mouse.move(0, 0);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 3 });
    const tooltip = page.locator('#vg-tooltip-element.visible');
    await tooltip.waitFor({ state: 'visible', timeout: 5_000 });
    const fields = Object.fromEntries(
      await tooltip.locator('tr').evaluateAll((rows) =>
        rows.map((tr) => [tr.querySelector('.key')?.textContent.replace(/:$/, ''), tr.querySelector('.value')?.textContent])));
    const num = (s) => Number(String(s).replace(/,/g, ''));
    for (const key of ['dtype', 'M', 'N']) assert.ok(key in fields, `${plot}: tooltip has no ${key}: ${JSON.stringify(fields)}`);
    const matches = (r) => r.dtype === fields.dtype && r.M === num(fields.M) && r.N === num(fields.N);
    if (plot === 'traffic_ratio') {
      const pair = pairs.find(([u]) => matches(u));
      assert.ok(pair, `${plot}: tooltip ${JSON.stringify(fields)} names no unfused/fused pair of the run`);
      const ratio = dramBytes(pair[0]) / dramBytes(pair[1]);
      assert.ok(Math.abs(num(fields.ratio) - ratio) <= 1e-3 * ratio + 5e-4, `${plot}: tooltip ratio ${fields.ratio}, records ${ratio}`);
      continue;
    }
    assert.ok('kernel' in fields, `${plot}: tooltip has no kernel: ${JSON.stringify(fields)}`);
    const record = ok.find((r) => r.kernel === fields.kernel && matches(r));
    assert.ok(record, `${plot}: tooltip ${JSON.stringify(fields)} names no ok record of the run`);
    const timeKey = Object.keys(fields).find((k) => k.includes('time'));
    assert.ok(timeKey, `${plot}: tooltip has no time: ${JSON.stringify(fields)}`);
    const expected = (fields.level || '').includes('model') ? record.model.bound_time_s : record.time.median_s;
    const shown = num(fields[timeKey]);
    assert.ok(Math.abs(shown - expected * 1e6) <= 1e-3 * expected * 1e6, `${plot}: tooltip time ${shown} µs, record ${expected * 1e6} µs`);
  }
});

test('the console shows no error', () => {
  if (consoleWarnings.length) console.log(`console warnings:\n  ${consoleWarnings.join('\n  ')}`);
  assert.deepEqual(consoleErrors, []);
});

test('the page fetched nothing: it opens offline', () => {
  assert.deepEqual(externalRequests, []);
});

// The page's title and the plots: from the top to the last chart (the tables below are text).
test('screenshot', async () => {
  await page.mouse.move(0, 0);
  await page.evaluate(() => window.scrollTo(0, 0));
  const bottom = await page.evaluate(() => {
    const charts = document.querySelectorAll('figure.chart');
    const last = charts[charts.length - 1];
    return last ? last.getBoundingClientRect().bottom + window.scrollY + 16 : 900;
  });
  await page.screenshot({ path: screenshot, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: Math.ceil(bottom) } });
  assert.ok(existsSync(screenshot));
  console.log(`screenshot: ${screenshot}`);
});
