/**
 * The bench's picture: one bar per target, its ratio to the bare proxy, the target as a line across
 * the bar; a row with no target yet (the KV file's) as a bar without a line. Plain SVG, no library:
 * a change's effect is visible at a glance.
 */

/** One bar: a ratio and the target it is held to, if any. */
export interface Bar {
  name: string;
  ratio: number;
  /** None: a figure only (drawn blue, without a line). */
  target?: number;
  /** `min`: the ratio must reach the target (req/s); `max`: it must stay under it (CPU, p99). */
  kind?: "min" | "max";
  /** False when the scenario's rounds had rejected requests or an exhausted pool. */
  valid: boolean;
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The SVG text of a bar chart of `bars`, titled `title`. */
export function ratioChart(bars: Bar[], title: string): string {
  const rowHeight = 26;
  const left = 290;
  const width = 760;
  const plot = width - left - 140;
  const top = 34;
  const height = top + bars.length * rowHeight + 30;
  const max = Math.max(1.5, ...bars.map((b) => Math.max(b.ratio, b.target ?? 0))) * 1.05;
  const round = (value: number) => Math.round(value * 10) / 10;
  const x = (value: number) => round(left + (value / max) * plot);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" ` +
    `font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="18" font-size="13" font-weight="bold">${escape(title)}</text>`,
  ];
  for (let tick = 0; tick <= max; tick += 0.5) {
    parts.push(
      `<line x1="${x(tick)}" x2="${x(tick)}" y1="${top - 4}" y2="${height - 24}" stroke="#ddd"/>`,
      `<text x="${x(tick)}" y="${height - 10}" text-anchor="middle" fill="#666">${
        tick.toFixed(1)
      }x</text>`,
    );
  }
  bars.forEach((bar, i) => {
    const y = top + i * rowHeight;
    const target = bar.target;
    const met = target === undefined ||
      (bar.kind === "min" ? bar.ratio >= target : bar.ratio <= target);
    const fill = !bar.valid
      ? "#999"
      : target === undefined
      ? "#2e6da4"
      : met
      ? "#3a7d44"
      : "#c0392b";
    const verdict = !bar.valid ? "invalid" : met ? "met" : "missed";
    parts.push(
      `<text x="${left - 6}" y="${y + 15}" text-anchor="end">${escape(bar.name)}</text>`,
      `<rect x="${left}" y="${y + 3}" width="${Math.max(1, round(x(bar.ratio) - left))}" ` +
        `height="${rowHeight - 8}" fill="${fill}"/>`,
    );
    if (target === undefined) {
      const text = `${bar.ratio.toFixed(2)}x${bar.valid ? " (no target)" : " invalid"}`;
      parts.push(`<text x="${x(bar.ratio) + 6}" y="${y + 15}">${text}</text>`);
      return;
    }
    // "<=" must be escaped: an SVG with a bare "<" in its text is not XML, and no viewer draws it.
    const label = `${bar.ratio.toFixed(2)}x ${
      bar.kind === "min" ? ">=" : "<="
    } ${target}x ${verdict}`;
    parts.push(
      `<line x1="${x(target)}" x2="${x(target)}" y1="${y}" y2="${y + rowHeight - 2}" ` +
        `stroke="#000" stroke-width="2"/>`,
      `<text x="${x(Math.max(bar.ratio, target)) + 6}" y="${y + 15}">${escape(label)}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}
