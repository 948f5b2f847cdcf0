// Renders a softmax-roofline run directory (what `softmax-bench run` / `report` wrote into it):
//   <stem>.vl.json  ->  <stem>.svg  (Vega's headless View.toSVG, no browser)
//                   ->  <stem>.png  (rsvg-convert, when it is installed)
//   report.md + specs -> report.html: one self-contained page. Vega, Vega-Lite and vega-embed are
//   inlined from node_modules and the specs are embedded, so the page fetches nothing and opens
//   offline. The Markdown is the same report.md; each plot's image becomes the interactive chart.
//
// Usage: node web/render.mjs RUN_DIR
// Every file is written atomically (temporary file, then rename). Exit 1 with one line on error.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

import { Marked } from 'marked';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

const kNodeModules = fileURLToPath(new URL('./node_modules/', import.meta.url));

// The order the report shows the plots in; any other spec in the directory follows, by name.
const kPlotOrder = ['roofline', 'bandwidth', 'traffic_ratio', 'time'];
const kSpecSuffix = '.vl.json';

function fail(message) {
  console.error(`render: ${message}`);
  process.exit(1);
}

function writeAtomic(file, content) {
  const tmp = `${file}.tmp.${process.pid}`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}

function readSpecs(dir) {
  const stems = readdirSync(dir)
    .filter((f) => f.endsWith(kSpecSuffix))
    .map((f) => f.slice(0, -kSpecSuffix.length));
  const rank = (s) => (kPlotOrder.includes(s) ? kPlotOrder.indexOf(s) : kPlotOrder.length);
  stems.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return stems.map((stem) => {
    const file = path.join(dir, stem + kSpecSuffix);
    try {
      return { stem, spec: JSON.parse(readFileSync(file, 'utf8')) };
    } catch (e) {
      fail(`${file}: not valid JSON: ${e.message}`);
    }
  });
}

async function toSvg(stem, spec) {
  const warnings = [];
  const logger = { warn: (...m) => warnings.push(m.join(' ')), info() {}, debug() {}, level() { return this; } };
  const compiled = vegaLite.compile(spec, { logger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logLevel: vega.Warn });
  const svg = await view.toSVG();
  view.finalize();
  for (const w of warnings) console.error(`render: ${stem}: Vega-Lite warning: ${w}`);
  return svg;
}

function findOnPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

// A minified build as an inline script: no source-map comment (nothing to fetch), and no text that
// would close the <script> element early.
function inlineScript(modulePath) {
  const code = readFileSync(path.join(kNodeModules, modulePath), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
  if (/<\/script/i.test(code)) fail(`${modulePath} contains "</script": cannot inline it`);
  return `<script>\n${code}\n</script>`;
}

const escapeHtml = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

// report.md as HTML: GitHub-flavoured Markdown; a paragraph that is only the image `<stem>.svg` of
// a spec we have becomes that chart's container.
function markdownToHtml(markdown, stems) {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      paragraph(token) {
        const only = token.tokens?.length === 1 ? token.tokens[0] : null;
        const stem = only?.type === 'image' ? only.href.replace(/\.svg$/, '') : null;
        if (stem && stems.includes(stem) && only.href === `${stem}.svg`) {
          return (
            `<figure class="chart"><div id="vis-${escapeHtml(stem)}" data-stem="${escapeHtml(stem)}"></div>` +
            `<figcaption>${escapeHtml(only.text)}: <code>${escapeHtml(stem)}.vl.json</code>, ` +
            `<code>${escapeHtml(stem)}.svg</code></figcaption></figure>\n`
          );
        }
        return false;  // marked's own paragraph
      },
      // Ids on headings, as a code host makes them, so the report's own links work here too.
      heading({ tokens, depth, text }) {
        const id = text.toLowerCase().trim().replace(/[^\p{L}\p{N}\s-]/gu, '').replace(/\s/g, '-');
        return `<h${depth} id="${escapeHtml(id)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
    },
  });
  return marked.parse(markdown);
}

const kStyle = `
  body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1100px;
         padding: 1rem 2rem 4rem; color: #1f2328; }
  h1 { font-size: 1.6rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; }
  h2 { font-size: 1.3rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2rem; }
  h3 { font-size: 1.05rem; margin-top: 1.4rem; }
  table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: 13px; display: block; overflow-x: auto; }
  th, td { border: 1px solid #d0d7de; padding: 3px 8px; }
  th { background: #f6f8fa; }
  tr:nth-child(even) td { background: #fbfcfd; }
  td[align="right"], th[align="right"] { font-variant-numeric: tabular-nums; }
  blockquote { margin: .5rem 0; padding: .3rem 1rem; border-left: 4px solid #d4a72c; background: #fff8e1; }
  pre { background: #f6f8fa; padding: .8rem; overflow: auto; max-height: 40rem; font-size: 12px; }
  code { font-size: 90%; }
  figure.chart { margin: 1rem 0 2rem; }
  figure.chart figcaption { color: #57606a; font-size: 12px; }
  .chart-error { color: #b00020; white-space: pre-wrap; }
`;

// Runs in the page: embeds every chart, then exposes the views for tests (window.smrViews) and a
// promise that settles when all charts are drawn (window.smrReady).
const kBoot = `
(function () {
  var specs = JSON.parse(document.getElementById('smr-specs').textContent);
  window.smrViews = {};
  var jobs = Array.prototype.map.call(document.querySelectorAll('[data-stem]'), function (el) {
    var stem = el.getAttribute('data-stem');
    return vegaEmbed(el, specs[stem], {
      renderer: 'svg',
      actions: { export: true, source: true, compiled: false, editor: false }
    }).then(function (result) {
      window.smrViews[stem] = result.view;
    }).catch(function (err) {
      el.className = 'chart-error';
      el.textContent = 'This chart failed to render: ' + err;
      console.error('chart ' + stem + ' failed to render: ' + err);
    });
  });
  window.smrReady = Promise.all(jobs).then(function () { return Object.keys(window.smrViews); });
})();
`;

function reportHtml(dir, specs) {
  const mdFile = path.join(dir, 'report.md');
  if (!existsSync(mdFile)) fail(`${mdFile} is missing: run \`softmax-bench report ${dir}/results.json\` first`);
  const markdown = readFileSync(mdFile, 'utf8');
  const stems = specs.map((s) => s.stem);
  const body = markdownToHtml(markdown, stems);
  const title = (markdown.match(/^# (.*)$/m) || [null, 'softmax-roofline report'])[1];
  const specMap = Object.fromEntries(specs.map(({ stem, spec }) => [stem, spec]));
  // JSON inside <script>: escape "<" so no string in it can end the element.
  const specJson = JSON.stringify(specMap).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="softmax-roofline web/render.mjs">
<title>${escapeHtml(title)}</title>
<style>${kStyle}</style>
${inlineScript('vega/build/vega.min.js')}
${inlineScript('vega-lite/build/vega-lite.min.js')}
${inlineScript('vega-embed/build/vega-embed.min.js')}
</head>
<body>
${body}
<script type="application/json" id="smr-specs">${specJson}</script>
<script>${kBoot}</script>
</body>
</html>
`;
}

async function main() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) fail(`Node.js ${process.versions.node} is too old: the pinned packages need Node.js >= 20`);
  const dir = process.argv[2];
  if (!dir || process.argv.length > 3) fail('usage: node web/render.mjs RUN_DIR');
  if (!existsSync(dir)) fail(`${dir}: no such directory`);
  const specs = readSpecs(dir);
  if (specs.length === 0)
    fail(`${dir}: no *${kSpecSuffix} specs: run \`softmax-bench report ${dir}/results.json\` first`);

  const rsvg = findOnPath('rsvg-convert');
  for (const { stem, spec } of specs) {
    let svg;
    try {
      svg = await toSvg(stem, spec);
    } catch (e) {
      fail(`${path.join(dir, stem + kSpecSuffix)}: ${e.message}`);
    }
    const svgFile = path.join(dir, `${stem}.svg`);
    writeAtomic(svgFile, svg);
    if (rsvg) {
      const pngFile = path.join(dir, `${stem}.png`);
      const tmp = `${pngFile}.tmp.${process.pid}`;
      const r = spawnSync(rsvg, ['--zoom', '2', '--background-color', 'white', '--format', 'png', '-o', tmp, svgFile]);
      if (r.status !== 0) fail(`rsvg-convert failed on ${svgFile}: ${String(r.stderr).trim()}`);
      renameSync(tmp, pngFile);
    }
  }
  writeAtomic(path.join(dir, 'report.html'), reportHtml(dir, specs));
}

main().catch((e) => fail(e.stack || String(e)));
