// A small SVG line plot on log–log axes (fleet size against requests per second), written by the
// bench beside its figures: no plotting library, the same numbers as the table.

export interface Series {
  readonly name: string;
  readonly color: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface PlotOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const W = 640;
const H = 400;
const M = { left: 70, right: 20, top: 40, bottom: 60 };

const decades = (lo: number, hi: number): number[] => {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
  return out;
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Number → short text (1,000 · 0.5 · 20). */
const label = (v: number) => (v >= 1 ? v.toLocaleString('en-US') : String(Number(v.toPrecision(2))));

export function logLogSvg(o: PlotOptions): string {
  const pts = o.series.flatMap((s) => s.points).filter(([x, y]) => x > 0 && y > 0);
  const xs = decades(Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0])));
  const ys = decades(Math.min(...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1])));
  const [x0, x1] = [Math.log10(xs[0]!), Math.log10(xs[xs.length - 1]!)];
  const [y0, y1] = [Math.log10(ys[0]!), Math.log10(ys[ys.length - 1]!)];
  const px = (x: number) => M.left + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * (W - M.left - M.right);
  const py = (y: number) => H - M.bottom - ((Math.log10(y) - y0) / (y1 - y0 || 1)) * (H - M.top - M.bottom);
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${esc(o.title)}</text>`,
  ];
  for (const x of xs)
    out.push(
      `<line x1="${px(x)}" y1="${M.top}" x2="${px(x)}" y2="${H - M.bottom}" stroke="#ddd"/>`,
      `<text x="${px(x)}" y="${H - M.bottom + 18}" text-anchor="middle">${label(x)}</text>`,
    );
  for (const y of ys)
    out.push(
      `<line x1="${M.left}" y1="${py(y)}" x2="${W - M.right}" y2="${py(y)}" stroke="#ddd"/>`,
      `<text x="${M.left - 8}" y="${py(y) + 4}" text-anchor="end">${label(y)}</text>`,
    );
  out.push(
    `<text x="${W / 2}" y="${H - 18}" text-anchor="middle">${esc(o.xLabel)}</text>`,
    `<text x="18" y="${H / 2}" text-anchor="middle" transform="rotate(-90 18 ${H / 2})">${esc(o.yLabel)}</text>`,
  );
  o.series.forEach((s, i) => {
    const p = s.points.filter(([x, y]) => x > 0 && y > 0);
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${p.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`,
      ...p.map(
        ([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3" fill="${s.color}"/>`,
      ),
      `<text x="${M.left + 10}" y="${M.top + 16 + i * 16}" fill="${s.color}">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>', '');
  return out.join('\n');
}
