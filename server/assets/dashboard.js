/* perfgate dashboard: browser side of the server-rendered pages.
 *
 * Reads the page's JSON from <script type="application/json" id="perfgate-data">
 * and draws charts with dygraphs (served as /assets/dygraph.min.js).
 * See the dashboard contract: no innerHTML with data, no inline styles
 * (only CSSOM), no eval.  Plain ES2017, one IIFE, no build step.
 */
(function () {
  'use strict';

  const PG = (window.perfgate = window.perfgate || {});

  // Line colours (colour-blind friendly-ish, readable on white).
  const PALETTE = ['#1f6fb5', '#d9531e', '#2a9d4b', '#8e44ad', '#b8860b',
                   '#0f8b8d', '#c2185b', '#5d6d7e'];

  // ---------------------------------------------------------------- helpers

  function readData() {
    const el = document.getElementById('perfgate-data');
    if (!el) return null;
    try {
      const d = JSON.parse(el.textContent);
      return d && typeof d === 'object' ? d : null;
    } catch (e) {
      return null;
    }
  }

  function markReady() {
    PG.drawnAt = performance.now();
    document.body.dataset.ready = '1';
  }

  function isNum(v) {
    return typeof v === 'number' && isFinite(v);
  }

  // Only http(s) and same-origin relative URLs are put into href attributes.
  function safeHref(u) {
    if (typeof u !== 'string' || u === '') return null;
    try {
      const url = new URL(u, window.location.href);
      if (url.protocol === 'http:' || url.protocol === 'https:') return u;
    } catch (e) { /* fall through */ }
    return null;
  }

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  // A counter's value with its unit and an SI prefix, never in scientific
  // notation: the rule of server/pages/quantity.hpp (docs/dashboard.md#numbers),
  // which the C++ pages follow; tests pin both to the same cases.
  const SI_PREFIXES = [[1e18, 'E'], [1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, '']];
  const TIME_PREFIXES = [[1, 's'], [1e-3, 'ms'], [1e-6, 'µs'], [1e-9, 'ns']];
  const BYTE_PREFIXES = [[1099511627776, 'TiB'], [1073741824, 'GiB'], [1048576, 'MiB'], [1024, 'KiB'], [1, 'B']];
  const SECONDS_PER = { ns: 1e-9, nsec: 1e-9, us: 1e-6, usec: 1e-6, 'µs': 1e-6, ms: 1e-3, msec: 1e-3,
                        s: 1, sec: 1, seconds: 1 };
  const BYTES_PER = { B: 1, bytes: 1, KiB: 1024, KB: 1024, kB: 1024, MiB: 1048576, MB: 1048576,
                      GiB: 1073741824, GB: 1073741824 };

  function significant(v, digits) {
    if (v === 0) return '0';
    const magnitude = Math.floor(Math.log10(Math.abs(v)));
    const decimals = Math.min(Math.max(digits - 1 - magnitude, 0), 12);
    let s = v.toFixed(decimals);
    if (s.indexOf('.') >= 0) s = s.replace(/0+$/, '').replace(/\.$/, '');
    return s === '-0' ? '0' : s;
  }

  function withPrefix(v, prefixes, digits) {
    function written(i) {
      const n = significant(v / prefixes[i][0], digits);
      return prefixes[i][1] ? n + ' ' + prefixes[i][1] : n;
    }
    let i = 0;
    while (i + 1 < prefixes.length && Math.abs(v) < prefixes[i][0]) i++;
    if (i > 0 && Math.abs(Number(significant(v / prefixes[i][0], digits))) * prefixes[i][0] >= prefixes[i - 1][0]) {
      return written(i - 1);
    }
    return written(i);
  }

  function fmtValue(v, unit, digits) {
    if (!isNum(v)) return '–';
    const d = digits || 4;
    const u = typeof unit === 'string' ? unit : '';
    if (Object.prototype.hasOwnProperty.call(SECONDS_PER, u)) return withPrefix(v * SECONDS_PER[u], TIME_PREFIXES, d);
    if (Object.prototype.hasOwnProperty.call(BYTES_PER, u)) return withPrefix(v * BYTES_PER[u], BYTE_PREFIXES, d);
    if (u === '%') return significant(v, d) + '%';
    const out = Math.abs(v) < 1000 ? significant(v, d) : withPrefix(v, SI_PREFIXES, d);
    return u ? out + ' ' + u : out;
  }
  PG.fmtValue = fmtValue;

  function fmtPct(v) {
    if (!isNum(v)) return '?';
    return (v > 0 ? '+' : '') + v.toFixed(1) + '%';
  }

  function fmtP(p) {
    if (!isNum(p)) return '?';
    if (p !== 0 && p < 1e-3) return p.toExponential(1).replace(/\.0e/, 'e');
    return String(Number(p.toPrecision(2)));
  }

  function isoDate(sec) {
    if (!isNum(sec)) return '—';
    const d = new Date(sec * 1000);
    if (isNaN(d.getTime())) return '—';
    return d.toISOString().replace(/\.000Z$/, 'Z');
  }

  function setUrlParams(changes) {
    if (!window.history || !window.history.replaceState) return;
    const url = new URL(window.location.href);
    Object.keys(changes).forEach(function (k) {
      const v = changes[k];
      if (v === null || v === undefined || v === false) url.searchParams.delete(k);
      else url.searchParams.set(k, String(v));
    });
    window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
  }

  // Keep the permalink presets (30d/90d/all) in sync with the in-place view
  // state (x axis, log scale); they drop any zoom window.
  function syncPresetLinks() {
    const cur = new URL(window.location.href).searchParams;
    document.querySelectorAll('a.preset').forEach(function (a) {
      const raw = a.getAttribute('href');
      if (!raw) return;
      let url;
      try { url = new URL(raw, window.location.href); } catch (e) { return; }
      if (url.origin !== window.location.origin) return;
      ['x', 'log'].forEach(function (k) {
        if (cur.has(k)) url.searchParams.set(k, cur.get(k));
        else url.searchParams.delete(k);
      });
      url.searchParams.delete('from');
      url.searchParams.delete('to');
      a.setAttribute('href', url.pathname + url.search + url.hash);
    });
  }

  function noData(container, text) {
    if (!container) return;
    while (container.firstChild) container.removeChild(container.firstChild);
    container.classList.add('empty');
    container.appendChild(el('p', 'no-data', text || 'No data.'));
  }

  let dygraphPatched = false;
  function haveDygraph() {
    if (typeof window.Dygraph !== 'function') return false;
    if (!dygraphPatched) {
      dygraphPatched = true;
      // The legend plugin sets a style="" attribute on every redraw (blocked by
      // our CSP and reported as a console error) and renders labels as HTML.
      // We never show the dygraphs legend (the hover box replaces it).
      const D = window.Dygraph;
      if (Array.isArray(D.PLUGINS) && D.Plugins && D.Plugins.Legend) {
        D.PLUGINS = D.PLUGINS.filter(function (p) { return p !== D.Plugins.Legend; });
      }
    }
    return true;
  }

  // Axis options shared by the charts. Values are numbers (ordinals or ms).
  function xAxisOptions(mode, runLabel) {
    const D = window.Dygraph;
    if (mode === 'date') {
      return {
        ticker: D.dateTicker,
        axisLabelFormatter: D.dateAxisLabelFormatter,
        valueFormatter: function (ms) { return new Date(ms).toISOString(); },
        pixelsPerLabel: 80
      };
    }
    return {
      ticker: function (min, max, pixels, opts, g, vals) {
        const ticks = D.numericTicks(min, max, pixels, opts, g, vals);
        return ticks.filter(function (t) { return Number.isInteger(t.v); });
      },
      axisLabelFormatter: function (k) {
        return runLabel ? runLabel(k) : String(k);
      },
      valueFormatter: function (k) { return String(k); },
      pixelsPerLabel: 60
    };
  }

  // ------------------------------------------------------------ series page

  // Median series: min–max whiskers (customBars extremes) plus the line.
  function medianPlotter(e) {
    const ctx = e.drawingContext;
    const pts = e.points;
    const area = e.plotArea;
    const cap = pts.length <= 150 ? 3 : 0;
    ctx.save();
    ctx.globalAlpha = pts.length > 1000 ? 0.35 : 0.6;
    ctx.lineWidth = 1;
    ctx.strokeStyle = e.color;
    ctx.beginPath();
    for (let i = 0; i < pts.length; i++) {
      const p = pts[i];
      if (p.yval === null || !isNum(p.canvasx)) continue;
      const t = p.y_top;
      const b = p.y_bottom;
      if (!isNum(t) || !isNum(b) || t === b) continue;
      const y1 = area.h * t + area.y;
      const y2 = area.h * b + area.y;
      const x = Math.round(p.canvasx) + 0.5;
      ctx.moveTo(x, y1);
      ctx.lineTo(x, y2);
      if (cap) {
        ctx.moveTo(x - cap, y1);
        ctx.lineTo(x + cap, y1);
        ctx.moveTo(x - cap, y2);
        ctx.lineTo(x + cap, y2);
      }
    }
    ctx.stroke();
    ctx.restore();
    window.Dygraph.Plotters.linePlotter(e);
  }

  // Band series: only the shaded lo–hi area, no line.  dygraphs' errorPlotter
  // fills one quad per point (10k sub-paths: ~300 ms in software canvas); this
  // fills one polygon, merging points that fall into the same pixel column.
  // Per line: the data rows where the line has a point but no band (the
  // first runs of a series or of a segment after a change point). The band
  // is drawn in pieces that break there, never bridged across a change.
  let bandGaps = [];

  function bandPlotter(e) {
    const ctx = e.drawingContext;
    const pts = e.points;
    const area = e.plotArea;
    const g = e.dygraph;
    const alpha = g.getNumericOption('fillAlpha', e.setName);
    const rgb = window.Dygraph.toRGB_(e.color);
    const gaps = bandGaps[Number(String(e.setName).slice(1))] || new Set();
    ctx.save();
    ctx.fillStyle = 'rgba(' + rgb.r + ',' + rgb.g + ',' + rgb.b + ',' + alpha + ')';
    let xs = [];
    let tops = [];
    let bots = [];
    function flush() {
      if (xs.length === 1) {
        ctx.beginPath();
        ctx.rect(xs[0] - 2, tops[0], 4, Math.max(bots[0] - tops[0], 1));
        ctx.fill();
      } else if (xs.length > 1) {
        ctx.beginPath();
        ctx.moveTo(xs[0], tops[0]);
        for (let i = 1; i < xs.length; i++) ctx.lineTo(xs[i], tops[i]);
        for (let i = xs.length - 1; i >= 0; i--) ctx.lineTo(xs[i], bots[i]);
        ctx.closePath();
        ctx.fill();
      }
      xs = [];
      tops = [];
      bots = [];
    }
    for (let i = 0; i < pts.length; i++) {
      const p = pts[i];
      if (p.yval === null && gaps.has(p.idx)) {
        flush();
        continue;
      }
      if (p.yval === null || !isNum(p.canvasx) || !isNum(p.y_top) || !isNum(p.y_bottom)) continue;
      const x = p.canvasx;
      const y1 = area.h * p.y_top + area.y;
      const y2 = area.h * p.y_bottom + area.y;
      const top = Math.min(y1, y2);
      const bot = Math.max(y1, y2);
      const n = xs.length;
      if (n && Math.abs(x - xs[n - 1]) < 0.5) {
        if (top < tops[n - 1]) tops[n - 1] = top;
        if (bot > bots[n - 1]) bots[n - 1] = bot;
      } else {
        xs.push(x);
        tops.push(top);
        bots.push(bot);
      }
    }
    flush();
    ctx.restore();
  }

  function seriesPage(data) {
    const t0 = performance.now();
    const chartDiv = document.getElementById('chart');
    const hover = document.getElementById('hover');
    const logBox = document.getElementById('log-toggle');
    const xSel = document.getElementById('x-axis');
    const lines = Array.isArray(data.lines) ? data.lines : [];
    const markers = Array.isArray(data.markers) ? data.markers : [];
    const view = data.view && typeof data.view === 'object' ? data.view : {};
    const unit = typeof data.unit === 'string' ? data.unit : '';
    const nLines = lines.length;
    const repoUrl = typeof data.repository_url === 'string' && safeHref(data.repository_url)
      ? data.repository_url.replace(/\/+$/, '') : null;
    const runUrl = typeof data.run_url === 'string' ? data.run_url : null;

    let xMode = view.x === 'date' ? 'date' : 'run';
    let logScale = view.log === true || view.log === 1 || view.log === '1';
    const visible = lines.map(function () { return true; });

    PG.drawnPoints = 0;
    PG.markerRuns = [];
    PG.chart = null;
    PG.xRange = function () { return PG.chart ? PG.chart.xAxisRange().slice() : null; };
    PG.pointPosition = function () { return null; };

    if (logBox) logBox.checked = logScale;
    if (xSel) xSel.value = xMode;
    document.querySelectorAll('input.line-toggle').forEach(function (cb) {
      const i = Number(cb.dataset.line);
      if (Number.isInteger(i) && i >= 0 && i < nLines) visible[i] = cb.checked;
    });

    // Merged order over all lines: sorted by (created_at, run_id).
    const merged = [];
    const byLineRun = new Map();   // "line:run" -> entry
    const byRun = new Map();       // run_id -> first entry
    lines.forEach(function (ln, li) {
      const pts = ln && Array.isArray(ln.points) ? ln.points : [];
      const band = new Map();
      (ln && Array.isArray(ln.band) ? ln.band : []).forEach(function (b) {
        if (b && isNum(b.lo) && isNum(b.hi)) band.set(b.run_id, b);
      });
      pts.forEach(function (p, pi) {
        if (!p || typeof p !== 'object') return;
        merged.push({ li: li, pi: pi, p: p, band: band.get(p.run_id) || null,
                      k: 0, x: 0, row: -1, ok: false });
      });
    });
    merged.sort(function (a, b) {
      return ((a.p.created_at || 0) - (b.p.created_at || 0)) ||
             ((a.p.run_id || 0) - (b.p.run_id || 0)) || (a.li - b.li) || (a.pi - b.pi);
    });
    merged.forEach(function (m, k) {
      m.k = k;
      const key = m.li + ':' + m.p.run_id;
      if (!byLineRun.has(key)) byLineRun.set(key, m);
      if (!byRun.has(m.p.run_id)) byRun.set(m.p.run_id, m);
    });
    // Per line: entries in the line's own order (for "previous point").
    const lineEntries = lines.map(function () { return []; });
    merged.forEach(function (m) { lineEntries[m.li][m.pi] = m; });

    if (!chartDiv) { markReady(); return; }
    if (merged.length === 0) {
      noData(chartDiv, 'No data points for this selection.');
      markReady();
      return;
    }
    if (!haveDygraph()) {
      noData(chartDiv, 'Chart library failed to load.');
      markReady();
      return;
    }

    // Columns: x, B0..Bn-1 (bands, drawn first), L0..Ln-1 (medians).
    const labels = ['x'];
    const colors = [];
    const seriesOpts = {};
    for (let i = 0; i < nLines; i++) {
      labels.push('B' + i);
      colors.push(PALETTE[i % PALETTE.length]);
      seriesOpts['B' + i] = { plotter: bandPlotter, highlightCircleSize: 0,
                              drawPoints: false, fillAlpha: 0.13 };
    }
    const few = merged.length <= 400;
    for (let i = 0; i < nLines; i++) {
      labels.push('L' + i);
      colors.push(PALETTE[i % PALETTE.length]);
      seriesOpts['L' + i] = { plotter: medianPlotter, drawPoints: few, pointSize: 2,
                              highlightCircleSize: 4, strokeWidth: 1.5 };
    }

    let rows = [];
    // Build the dygraphs rows for the current x mode and scale.
    function buildRows() {
      rows = [];
      bandGaps = lines.map(function () { return new Set(); });
      const width = 1 + 2 * nLines;
      let last = null;
      for (let k = 0; k < merged.length; k++) {
        const m = merged[k];
        const p = m.p;
        const x = xMode === 'date' ? (isNum(p.created_at) ? p.created_at * 1000 : 0) : k;
        const li = m.li;
        let row;
        if (xMode === 'date' && last && last[0] === x && last[1 + nLines + li] === null) {
          row = last;
        } else {
          row = new Array(width).fill(null);
          row[0] = x;
          rows.push(row);
          last = row;
        }
        m.x = x;
        m.row = rows.length - 1;
        m.ok = false;
        const med = p.median;
        if (isNum(med) && !(logScale && med <= 0)) {
          let lo = isNum(p.min) ? Math.min(p.min, med) : med;
          const hi = isNum(p.max) ? Math.max(p.max, med) : med;
          if (logScale && lo <= 0) lo = med;
          row[1 + nLines + li] = [lo, med, hi];
          m.ok = true;
          const b = m.band;
          if (b && !(logScale && b.lo <= 0)) {
            const blo = Math.min(b.lo, b.hi);
            const bhi = Math.max(b.lo, b.hi);
            row[1 + li] = [blo, (blo + bhi) / 2, bhi];
          } else {
            bandGaps[li].add(m.row);
          }
        }
      }
    }

    function countDrawn() {
      let n = 0;
      for (let k = 0; k < merged.length; k++) {
        if (merged[k].ok && visible[merged[k].li]) n++;
      }
      return n;
    }

    function buildAnnotations() {
      const anns = [];
      const runs = [];
      const seen = new Set();
      markers.forEach(function (mk) {
        if (!mk || typeof mk !== 'object') return;
        const li = Number(mk.line);
        if (!Number.isInteger(li) || li < 0 || li >= nLines || !visible[li]) return;
        const m = byLineRun.get(li + ':' + mk.run_id);
        if (!m || !m.ok) return;
        const key = li + ':' + m.x;
        if (seen.has(key)) return;   // dygraphs shows one annotation per point
        seen.add(key);
        const short = fmtPct(mk.delta_pct);
        let title = (mk.alert_id !== null && mk.alert_id !== undefined
          ? 'alert ' + mk.alert_id : 'change point') + ': ' + short + ', p=' + fmtP(mk.p_value);
        if (typeof mk.status === 'string' && mk.status) title += ' (' + mk.status + ')';
        const href = safeHref(mk.href);
        const status = typeof mk.status === 'string' && /^[a-z_-]+$/.test(mk.status)
          ? ' status-' + mk.status : '';
        const ann = {
          series: 'L' + li,
          x: m.x,
          shortText: short,
          text: title,
          width: 12 + 7 * short.length,
          height: 16,
          tickHeight: 8,
          cssClass: 'pg-marker' + status + (href ? ' has-link' : '')
        };
        if (href) ann.clickHandler = function () { window.location.href = href; };
        anns.push(ann);
        runs.push(mk.run_id);
      });
      PG.markerRuns = runs;
      return anns;
    }

    function runLabel(k) {
      const m = merged[k];
      return m ? '#' + m.p.run_id : '';
    }

    function fullRange() {
      if (xMode === 'run') return [0, Math.max(merged.length - 1, 0)];
      return [rows[0][0], rows[rows.length - 1][0]];
    }

    // A zero-width x range breaks dygraphs' scaling: pad it.
    function padWindow(w) {
      if (!w) return null;
      if (w[1] > w[0]) return w;
      const pad = xMode === 'run' ? 1 : 3600 * 1000;
      return [w[0] - pad, w[1] + pad];
    }

    // The initial zoom is the address's from/to (kept there by zooming), not
    // the page's data: the server caches one page for every zoom.
    function viewNumber(name) {
      const v = new URLSearchParams(window.location.search).get(name);
      if (v === null || v === '') return null;
      const n = Number(v);
      return Number.isFinite(n) ? n : null;
    }

    function initialWindow() {
      const f = viewNumber('from');
      const t = viewNumber('to');
      const scale = xMode === 'date' ? 1000 : 1;
      if (!isNum(f) && !isNum(t)) {
        const full = fullRange();
        return full[1] > full[0] ? null : padWindow(full);
      }
      const full = fullRange();
      const lo = isNum(f) ? f * scale : full[0];
      const hi = isNum(t) ? t * scale : full[1];
      if (!(hi > lo)) return padWindow(full[1] > full[0] ? null : full);
      return [lo, hi];
    }

    // ----- hover box
    function showPoint(m) {
      if (!hover) return;
      const p = m.p;
      const ln = lines[m.li] || {};
      while (hover.firstChild) hover.removeChild(hover.firstChild);
      hover.classList.add('active');

      const head = el('div', 'hover-head');
      const sw = el('span', 'swatch');
      sw.style.backgroundColor = PALETTE[m.li % PALETTE.length];
      head.appendChild(sw);
      head.appendChild(el('span', 'line-label', ln.label || ('line ' + m.li)));
      hover.appendChild(head);

      const dl = el('dl');
      function item(k, v) {
        const d = el('div', 'item');
        d.appendChild(el('dt', null, k));
        const dd = el('dd');
        if (v instanceof Node) dd.appendChild(v); else dd.textContent = v;
        d.appendChild(dd);
        dl.appendChild(d);
        return dd;
      }
      const sha = typeof p.git_sha === 'string' ? p.git_sha.slice(0, 12) : '';
      if (repoUrl && sha) {
        const a = el('a', 'commit', sha);
        a.href = repoUrl + '/commit/' + encodeURIComponent(p.git_sha);
        a.rel = 'noopener';
        item('commit', a);
      } else {
        item('commit', el('code', 'sha', sha || '—'));
      }
      item('branch', typeof p.branch === 'string' ? p.branch : (ln.branch || '—'));
      item('role', typeof p.role === 'string' && p.role ? p.role : (ln.role || '—'));
      // Where the point came from: a run that feeds the branch's series (a
      // push's), or one shown on request (a pull request's, an unmarked one).
      if (typeof p.mainline === 'boolean') item('series', p.mainline ? 'mainline' : 'not mainline (shown on request)');
      item('date', isoDate(p.created_at));
      item('median', fmtValue(p.median, unit));
      if (isNum(p.min) && isNum(p.max)) item('min–max', fmtValue(p.min, unit) + ' – ' + fmtValue(p.max, unit));
      if (isNum(p.n)) item('n', String(p.n));
      const prevEntry = m.pi > 0 ? lineEntries[m.li][m.pi - 1] : null;
      let delta = '—';
      if (prevEntry && isNum(prevEntry.p.median) && prevEntry.p.median !== 0 && isNum(p.median)) {
        delta = fmtPct((p.median - prevEntry.p.median) / Math.abs(prevEntry.p.median) * 100);
      }
      const dd = item('Δ prev', delta);
      if (delta !== '—') {
        const up = delta.charAt(0) === '+';
        const worse = data.better === 'higher' ? !up : up;
        if (delta !== '+0.0%' && delta !== '-0.0%') dd.className = worse ? 'worse' : 'better';
      }
      const runHref = runUrl ? safeHref(runUrl + p.run_id) : null;
      if (runHref) {
        const a = el('a', 'run', '#' + p.run_id);
        a.href = runHref;
        item('run', a);
      } else {
        item('run', '#' + p.run_id);
      }
      hover.appendChild(dl);
    }

    function entryForPoint(pt) {
      if (!pt || typeof pt.name !== 'string' || pt.name.charAt(0) !== 'L') return null;
      const li = Number(pt.name.slice(1));
      // Rows may hold several lines' points (date mode); find this line's entry.
      const row = pt.idx;
      // Binary search over merged by row (rows are monotonic in merged order).
      let lo = 0;
      let hi = merged.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (merged[mid].row < row) lo = mid + 1; else hi = mid;
      }
      for (let k = lo; k < merged.length && merged[k].row === row; k++) {
        if (merged[k].li === li) return merged[k];
      }
      return null;
    }

    function highlight(event, x, points, row) {
      let best = null;
      let bestD = Infinity;
      let my = null;
      if (event && event.type && g) {
        try { my = g.eventToDomCoords(event)[1]; } catch (e) { my = null; }
      }
      for (let i = 0; i < points.length; i++) {
        const pt = points[i];
        if (pt.name.charAt(0) !== 'L' || pt.yval === null || isNaN(pt.yval)) continue;
        const d = my === null ? 0 : Math.abs(pt.canvasy - my);
        if (d < bestD) { bestD = d; best = pt; }
      }
      const m = entryForPoint(best);
      if (m) showPoint(m);
    }

    const T = (PG.timings = { start: t0 });
    buildRows();
    T.rows = performance.now();
    const opts = {
      labels: labels,
      colors: colors,
      series: seriesOpts,
      customBars: true,
      connectSeparatedPoints: true,
      legend: 'never',
      logscale: logScale,
      visibility: [],
      axes: {
        x: xAxisOptions(xMode, runLabel),
        y: {
          // Wide enough for "1023.5 KiB" at 12px: labels were cut at 60.
          axisLabelWidth: 84,
          valueFormatter: function (v) { return fmtValue(v, unit); },
          axisLabelFormatter: function (v) { return fmtValue(v, unit); }
        }
      },
      axisLabelFontSize: 12,
      gridLineColor: '#e3e6ea',
      axisLineColor: '#9aa3ad',
      highlightCallback: highlight,
      pointClickCallback: function (e, pt) {
        const m = entryForPoint(pt);
        if (!m || !runUrl) return;
        const href = safeHref(runUrl + m.p.run_id);
        if (href) window.location.href = href;
      },
      zoomCallback: function (lo, hi) {
        if (!g) return;
        if (g.isZoomed('x')) {
          if (xMode === 'date') {
            setUrlParams({ from: Math.floor(lo / 1000), to: Math.ceil(hi / 1000) });
          } else {
            setUrlParams({ from: Math.floor(lo), to: Math.ceil(hi) });
          }
        } else {
          setUrlParams({ from: null, to: null });
        }
      },
      xRangePad: 8,
      resizable: 'passive'
    };
    for (let i = 0; i < nLines; i++) opts.visibility.push(visible[i]);
    for (let i = 0; i < nLines; i++) opts.visibility.push(visible[i]);
    const win = initialWindow();
    if (win) opts.dateWindow = win;

    let g = null;
    g = new window.Dygraph(chartDiv, rows, opts);
    T.constructed = performance.now();
    PG.chart = g;

    PG.pointPosition = function (runId) {
      const m = byRun.get(runId) !== undefined ? byRun.get(runId) : byRun.get(Number(runId));
      if (!m || !m.ok || !PG.chart) return null;
      const c = PG.chart.toDomCoords(m.x, m.p.median);
      const r = chartDiv.getBoundingClientRect();
      return { x: r.left + window.scrollX + c[0], y: r.top + window.scrollY + c[1] };
    };

    g.ready(function () {
      g.setAnnotations(buildAnnotations());
      T.annotated = performance.now();
      PG.drawnPoints = countDrawn();
      markReady();
    });

    // ----- controls
    if (logBox) {
      logBox.addEventListener('change', function () {
        logScale = logBox.checked;
        const w = g.isZoomed('x') ? g.xAxisRange() : null;
        buildRows();
        // Annotations first (no draw), then one redraw that re-parses the data.
        g.setAnnotations(buildAnnotations(), true);
        g.updateOptions({ file: rows, logscale: logScale, dateWindow: w || initialFull() });
        PG.drawnPoints = countDrawn();
        setUrlParams({ log: logScale ? '1' : null });
        syncPresetLinks();
        PG.drawnAt = performance.now();
      });
    }

    function initialFull() {
      const full = fullRange();
      return full[1] > full[0] ? null : padWindow(full);
    }

    // Convert the zoom window between x modes via the merged point order.
    function convertWindow(w, from, to) {
      if (!w) return null;
      if (from === 'run' && to === 'date') {
        const a = Math.max(0, Math.ceil(w[0]));
        const b = Math.min(merged.length - 1, Math.floor(w[1]));
        if (a >= b) return null;
        const lo = merged[a].p.created_at * 1000;
        const hi = merged[b].p.created_at * 1000;
        return hi > lo ? [lo, hi] : null;
      }
      if (from === 'date' && to === 'run') {
        let a = -1;
        let b = -1;
        for (let k = 0; k < merged.length; k++) {
          const t = merged[k].p.created_at * 1000;
          if (a < 0 && t >= w[0]) a = k;
          if (t <= w[1]) b = k;
        }
        return a >= 0 && b > a ? [a, b] : null;
      }
      return w;
    }

    if (xSel) {
      xSel.addEventListener('change', function () {
        const next = xSel.value === 'date' ? 'date' : 'run';
        if (next === xMode) return;
        const w = g.isZoomed('x') ? convertWindow(g.xAxisRange(), xMode, next) : null;
        xMode = next;
        buildRows();
        g.setAnnotations(buildAnnotations(), true);
        g.updateOptions({ file: rows, axes: { x: xAxisOptions(xMode, runLabel) },
                          dateWindow: w || initialFull() });
        PG.drawnPoints = countDrawn();
        const params = { x: xMode === 'date' ? 'date' : null, from: null, to: null };
        if (w) {
          params.from = xMode === 'date' ? Math.floor(w[0] / 1000) : w[0];
          params.to = xMode === 'date' ? Math.ceil(w[1] / 1000) : w[1];
        }
        setUrlParams(params);
        syncPresetLinks();
        PG.drawnAt = performance.now();
      });
    }

    document.querySelectorAll('input.line-toggle').forEach(function (cb) {
      cb.addEventListener('change', function () {
        const i = Number(cb.dataset.line);
        if (!Number.isInteger(i) || i < 0 || i >= nLines) return;
        visible[i] = cb.checked;
        g.setVisibility([i, nLines + i], cb.checked);
        g.setAnnotations(buildAnnotations());
        PG.drawnPoints = countDrawn();
      });
    });
  }

  // ---------------------------------------------------------- overview page

  function sparklineOptions(extra) {
    const o = {
      labels: ['x', 'y'],
      colors: [PALETTE[0]],
      legend: 'never',
      drawGrid: false,
      axes: {
        x: { drawAxis: false, drawGrid: false },
        y: { drawAxis: false, drawGrid: false }
      },
      xAxisHeight: 0,
      axisLabelWidth: 0,
      rightGap: 2,
      xRangePad: 2,
      strokeWidth: 1.2,
      highlightCircleSize: 2,
      showLabelsOnHighlight: false,
      interactionModel: {}
    };
    Object.keys(extra || {}).forEach(function (k) { o[k] = extra[k]; });
    return o;
  }

  function overviewPage(data) {
    const sparks = Array.isArray(data.sparklines) ? data.sparklines : [];
    const have = haveDygraph();
    document.querySelectorAll('.sparkline[data-index]').forEach(function (div) {
      const k = Number(div.dataset.index);
      const s = Number.isInteger(k) ? sparks[k] : null;
      if (!s) return;
      const href = safeHref(s.href);
      if (href) {
        div.classList.add('link');
        div.title = (s.benchmark || '') + ' · ' + (s.counter || '');
        div.addEventListener('click', function () { window.location.href = href; });
      }
      const pts = (Array.isArray(s.points) ? s.points : []).filter(function (p) {
        return Array.isArray(p) && isNum(p[1]);
      });
      if (!have || pts.length === 0) {
        div.appendChild(el('span', 'no-data', 'no data'));
        return;
      }
      const rows = pts.map(function (p, i) { return [i, p[1]]; });
      const extra = { drawPoints: rows.length <= 2, pointSize: 2 };
      if (rows.length === 1) {
        extra.dateWindow = [-1, 1];
        extra.valueRange = [rows[0][1] - 1, rows[0][1] + 1];
      }
      try {
        new window.Dygraph(div, rows, sparklineOptions(extra));
      } catch (e) {
        div.appendChild(el('span', 'no-data', '—'));
      }
    });
    markReady();
  }

  // -------------------------------------------------------- comparison page

  function comparisonPage(data) {
    const hists = Array.isArray(data.histories) ? data.histories : [];
    const have = haveDygraph();
    document.querySelectorAll('.history[data-index]').forEach(function (div) {
      const k = Number(div.dataset.index);
      const h = Number.isInteger(k) ? hists[k] : null;
      if (!h) return;
      const pts = (Array.isArray(h.points) ? h.points : []).filter(function (p) {
        return Array.isArray(p) && isNum(p[1]) && isNum(p[2]);
      }).slice().sort(function (a, b) { return (a[1] - b[1]) || (a[0] - b[0]); });
      if (!have || pts.length === 0) {
        noData(div, 'no history');
        return;
      }
      const hl = Array.isArray(h.highlight) ? h.highlight : [];
      const base = hl[0];
      const head = hl[1];
      // x: the run's position in the history (runs uploaded in the same
      // second would share a date); the axis and the hover name the run.
      const rows = pts.map(function (p, i) { return [i, p[2]]; });
      const special = new Map();   // row index -> 'base' | 'head'
      pts.forEach(function (p, i) {
        if (p[0] === head) special.set(i, 'head');
        else if (p[0] === base) special.set(i, 'base');
      });
      const unit = typeof h.unit === 'string' ? h.unit : '';
      const opts = {
        labels: ['x', 'median'],
        colors: ['#5d6d7e'],
        legend: 'never',
        axisLabelFontSize: 11,
        strokeWidth: 1.2,
        drawPoints: true,
        pointSize: 1.5,
        gridLineColor: '#eceef1',
        axes: {
          x: xAxisOptions('run', function (k) { return pts[k] ? '#' + pts[k][0] : ''; }),
          y: { axisLabelWidth: 76, pixelsPerLabel: 20,
               axisLabelFormatter: function (v) { return fmtValue(v, unit); } }
        },
        xRangePad: 8,
        drawPointCallback: function (gr, name, ctx, cx, cy, color, size, idx) {
          const kind = special.get(idx);
          ctx.beginPath();
          if (kind) {
            ctx.fillStyle = kind === 'head' ? '#d9531e' : '#1f6fb5';
            ctx.arc(cx, cy, 5, 0, 2 * Math.PI, false);
            ctx.fill();
            ctx.lineWidth = 1.5;
            ctx.strokeStyle = '#fff';
            ctx.stroke();
          } else {
            ctx.fillStyle = color;
            ctx.arc(cx, cy, size, 0, 2 * Math.PI, false);
            ctx.fill();
          }
        },
        highlightCallback: function (e, x, points) {
          const pt = points && points[0];
          if (!pt) return;
          const p = pts[pt.idx];
          if (p) div.title = 'run #' + p[0] + ': ' + fmtValue(p[2], unit) +
            ' (' + isoDate(p[1]) + ')';
        }
      };
      if (rows.length === 1) opts.dateWindow = [-1, 1];
      let g;
      try {
        g = new window.Dygraph(div, rows, opts);
      } catch (e) {
        noData(div, 'chart failed');
        return;
      }
      g.ready(function () {
        const anns = [];
        special.forEach(function (kind, idx) {
          anns.push({ series: 'median', x: rows[idx][0], shortText: kind, text: kind + ' run #' +
                      pts[idx][0], width: 34, height: 15, cssClass: 'pg-marker ' + kind });
        });
        if (anns.length) g.setAnnotations(anns);
      });
    });
    markReady();
  }

  // ------------------------------------------------------------------ main

  function main() {
    const tParse = performance.now();
    const data = readData() || {};
    PG.parseMs = performance.now() - tParse;
    const page = typeof data.page === 'string' ? data.page : document.body.dataset.page;
    try {
      if (page === 'series') seriesPage(data);
      else if (page === 'overview') overviewPage(data);
      else if (page === 'comparison') comparisonPage(data);
      else markReady();
    } finally {
      if (document.body.dataset.ready !== '1') markReady();
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', main);
  } else {
    main();
  }
})();
