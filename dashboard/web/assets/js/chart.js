// A small bar-and-line chart in inline SVG: requests per time bucket as bars, cost per bucket
// as a line on its own scale. No library: the dashboard loads nothing from elsewhere.

const svgNS = "http://www.w3.org/2000/svg";
const W = 800, H = 240, PAD_L = 48, PAD_R = 64, PAD_T = 12, PAD_B = 28;

// Bucket sizes the chart picks from: the smallest that keeps it at most maxBuckets wide.
const bucketSizes = [60e3, 300e3, 900e3, 3600e3, 6 * 3600e3, 86400e3, 7 * 86400e3];
const maxBuckets = 60;

function el(name, attrs, text) {
  const e = document.createElementNS(svgNS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// bucketize counts entries ({ms, cost}) into equal time buckets from start to end (ms).
// Costs are summed as floats: the chart shows a shape, the table the exact amounts.
export function bucketize(entries, start, end) {
  const span = Math.max(end - start, 1);
  const size = bucketSizes.find((s) => span / s <= maxBuckets) || bucketSizes[bucketSizes.length - 1];
  const first = Math.floor(start / size) * size;
  const n = Math.max(1, Math.ceil((end - first) / size));
  const buckets = Array.from({ length: n }, (_, i) => ({ start: first + i * size, size, count: 0, cost: 0 }));
  for (const e of entries) {
    const i = Math.floor((e.ms - first) / size);
    if (i >= 0 && i < n) {
      buckets[i].count++;
      buckets[i].cost += e.cost;
    }
  }
  return buckets;
}

function label(ms, size) {
  const d = new Date(ms);
  return size >= 86400e3
    ? d.toLocaleDateString(undefined, { month: "short", day: "numeric" })
    : d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

// drawChart replaces container's content with the chart of buckets.
export function drawChart(container, buckets, costLabel) {
  const maxCount = Math.max(1, ...buckets.map((b) => b.count));
  const maxCost = Math.max(0, ...buckets.map((b) => b.cost));
  const total = buckets.reduce((s, b) => s + b.count, 0);
  const plotW = W - PAD_L - PAD_R, plotH = H - PAD_T - PAD_B;
  const step = plotW / buckets.length;
  const y = (v, max) => PAD_T + plotH - (max ? (v / max) * plotH : 0);

  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "chart-desc" });
  svg.append(el("desc", { id: "chart-desc" }, `${total} requests in ${buckets.length} intervals; bars are requests, the line is ${costLabel}.`));
  svg.append(el("line", { x1: PAD_L, y1: PAD_T + plotH, x2: W - PAD_R, y2: PAD_T + plotH, class: "axis" }));
  svg.append(el("text", { x: PAD_L - 6, y: PAD_T + 10, class: "tick", "text-anchor": "end" }, String(maxCount)));
  svg.append(el("text", { x: PAD_L - 6, y: PAD_T + plotH, class: "tick", "text-anchor": "end" }, "0"));
  svg.append(el("text", { x: W - PAD_R + 6, y: PAD_T + 10, class: "tick cost" }, "$" + maxCost.toPrecision(3)));
  svg.append(el("text", { x: PAD_L, y: H - 8, class: "tick" }, label(buckets[0].start, buckets[0].size)));
  const last = buckets[buckets.length - 1];
  svg.append(el("text", { x: W - PAD_R, y: H - 8, class: "tick", "text-anchor": "end" }, label(last.start + last.size, last.size)));

  const points = [];
  buckets.forEach((b, i) => {
    const x = PAD_L + i * step;
    if (b.count) {
      const top = y(b.count, maxCount);
      const bar = el("rect", { x: x + step * 0.1, y: top, width: Math.max(1, step * 0.8), height: PAD_T + plotH - top, class: "bar" });
      bar.dataset.count = b.count;
      bar.append(el("title", {}, `${label(b.start, b.size)}: ${b.count} requests, $${b.cost.toFixed(6)}`));
      svg.append(bar);
    }
    points.push(`${(x + step / 2).toFixed(1)},${y(b.cost, maxCost).toFixed(1)}`);
  });
  svg.append(el("polyline", { points: points.join(" "), class: "cost-line" }));
  container.replaceChildren(svg);
}
