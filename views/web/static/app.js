// zwatch status page plots: each <figure class="plot"> names a history
// source and series in data attributes; this fetches /api/history once per
// source and draws the series' means with uPlot, with the min-max band
// where the points are aggregates. Without JavaScript the page still shows
// every current value; only the plots are missing.
"use strict";

(function () {
  const cache = new Map();

  function history(host, source, range) {
    const key = host + "|" + source + "|" + range;
    if (!cache.has(key)) {
      const q = new URLSearchParams({ host: host, source: source, range: range });
      cache.set(key, fetch("/api/history?" + q.toString(), { credentials: "same-origin" }).then(function (r) {
        return r.json().then(function (body) {
          if (!r.ok) {
            throw new Error(body.error || r.statusText);
          }
          return body;
        });
      }));
    }
    return cache.get(key);
  }

  function note(fig, text) {
    const p = document.createElement("p");
    p.className = "plot-note";
    p.textContent = text;
    fig.appendChild(p);
  }

  function color(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  const palette = ["--plot", "--bad", "--warn", "--ok"];

  function draw(fig, res) {
    const names = fig.dataset.series.split(",").filter(function (n) { return res.series && res.series[n]; });
    if (!res.t || res.t.length === 0 || names.length === 0) {
      note(fig, "No history yet.");
      return;
    }
    const data = [res.t];
    const series = [{}];
    const fg = color("--fg");
    const grid = color("--line");
    names.forEach(function (n, i) {
      data.push(res.series[n].mean);
      series.push({ label: n, stroke: color(palette[i % palette.length]), width: 1.5, spanGaps: true });
    });
    // One series: its hourly and daily aggregates' min..max as a band.
    let bands;
    if (names.length === 1) {
      const col = res.series[names[0]];
      data.push(col.min, col.max);
      series.push({ label: "min", stroke: "transparent", spanGaps: true, points: { show: false } },
        { label: "max", stroke: "transparent", spanGaps: true, points: { show: false } });
      bands = [{ series: [3, 2], fill: color("--plot-band") }];
    }
    const width = Math.max(200, Math.floor(fig.clientWidth || 300));
    // The x axis spans the range asked for, so one point of a young
    // history sits at its time rather than on an axis of its own.
    const from = Date.parse(res.from) / 1000, to = Date.parse(res.to) / 1000;
    const opts = {
      width: width,
      height: 150,
      series: series,
      scales: { x: { time: true, range: isFinite(from) && isFinite(to) && from < to ? [from, to] : undefined } },
      legend: { show: names.length > 1 },
      bands: bands,
      axes: [
        { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 50 },
      ],
    };
    const plot = new uPlot(opts, data, fig);
    fig.dataset.drawn = "true";
    window.addEventListener("resize", function () {
      plot.setSize({ width: Math.max(200, Math.floor(fig.clientWidth || 300)), height: 150 });
    });
  }

  function start() {
    if (typeof uPlot === "undefined") {
      return;
    }
    document.querySelectorAll("figure.plot").forEach(function (fig) {
      history(fig.dataset.host, fig.dataset.source, fig.dataset.range || "30d")
        .then(function (res) { draw(fig, res); })
        .catch(function (err) { note(fig, "No plot: " + err.message); });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
