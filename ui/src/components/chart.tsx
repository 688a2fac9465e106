import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

/**
 * A time-series line chart drawn by uPlot on a canvas, sized to its frame (and again whenever the
 * frame changes size, e.g. a phone turned sideways). The legend under it names every series and,
 * while the pointer is on the chart, shows its value; the page beside it shows the same numbers
 * in a table for those who cannot see the canvas.
 */
export interface ChartSeries {
  label: string;
  values: Array<number | null>;
}

export interface ChartProps {
  title: string;
  /** Bucket starts, Unix seconds (UTC). */
  x: number[];
  series: ChartSeries[];
  format: (value: number) => string;
  /** How the legend names a bucket (its start, Unix seconds). */
  formatX: (seconds: number) => string;
  /** Counts: ticks on whole numbers only. */
  integer?: boolean;
  height?: number;
}

const WHOLE_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 1e7, 1e8];

/** Distinguishable on white and for the common colour-vision deficiencies (Okabe–Ito). */
export const PALETTE = [
  "#0072b2",
  "#d55e00",
  "#009e73",
  "#cc79a7",
  "#e69f00",
  "#56b4e9",
  "#000000",
  "#8c6d31",
  "#999999",
];

export function Chart({ title, x, series, format, formatX, integer = false, height = 260 }: ChartProps) {
  const frame = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height,
      // Buckets are UTC days, weeks and months: label them in UTC, whatever the browser's zone.
      tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), "Etc/UTC"),
      scales: { x: { time: true }, y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] } },
      axes: [{}, { values: (_u, ticks) => ticks.map(format), size: 84, ...(integer ? { incrs: WHOLE_STEPS } : {}) }],
      series: [
        { label: "Time", value: (_u: uPlot, seconds: number | null) => (seconds === null ? "—" : formatX(seconds)) },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 2,
          points: { show: true, size: 5 },
          value: (_u: uPlot, value: number | null) => (value === null ? "—" : format(value)),
        })),
      ],
    };
    const plot = new uPlot(options, [x, ...series.map((s) => s.values)], element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 200), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, format, formatX, integer, height]);
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={frame} class="chart-frame" />
    </figure>
  );
}
