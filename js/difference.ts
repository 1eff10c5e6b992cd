// The difference chart under a family's curves: with exactly two sets highlighted and a
// permutation test behind the view (dp.permutation_test, passed as permutation=...), the
// observed difference A − B over the slider's domain against the band ±envelope around 0,
// the difference that relabelling the pooled samples alone produces at each point, and the
// pair's Holm-adjusted permutation p-value. Labels are untrusted: they only ever go into
// textContent; Vega draws numbers and fixed words.
import embed, { type VisualizationSpec } from "vega-embed";
import type { View } from "vega";
import type { FamilySpec, PairEnvelope } from "./model";
import type { Permutation } from "./traits";
import type { Curve } from "./pairs";
import { CHART_CONFIG, TOOLTIP_OPTIONS } from "./theme";

/** The difference chart's styles: colours follow the page's theme (JupyterLab's variables,
 *  else the explorer's text colour); Vega draws in currentColor, the band in neutral grey. */
export const DIFFERENCE_STYLE = `
.dp-explorer .dp-difference { margin: 8px 0 0; }
.dp-explorer .dp-difference-title { font-weight: 600; max-width: 340px; }
.dp-explorer .dp-difference-p { font-size: 12px; max-width: 340px; margin: 2px 0 0; }
`;

export interface Difference {
  el: HTMLElement;
  /** Redraw for the highlighted sets and the slider's grid indices [lo, hi]. */
  show(selected: Set<string>, lo: number, hi: number): void;
  destroy(): void;
}

const fmt = (x: number) => Number(x.toPrecision(3)).toString();

/** How a p-value reads: two significant digits, "< 0.001" below that. */
export function pText(p: number | null): string {
  if (p === null || !Number.isFinite(p)) return "not available";
  return p < 0.001 ? "< 0.001" : Number(p.toPrecision(2)).toString();
}

function chartSpec(fam: FamilySpec): VisualizationSpec {
  const log = fam.axis === "log";
  const x = {
    field: "x", type: "quantitative", title: `${fam.axis_title || fam.parameter}` + (log ? " (log)" : ""),
    scale: log ? { type: "log" as const } : { zero: false },
  } as const;
  const interpolate = fam.step ? "step-after" : "linear";
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    width: 280, height: 110,
    ...CHART_CONFIG, // text, axes and the observed line take the container's colour
    datasets: { difference: [] },
    data: { name: "difference" },
    layer: [
      { mark: { type: "area", color: "#888888", opacity: 0.4, interpolate },
        transform: [{ filter: "isValid(datum.band)" }],
        encoding: { x, y: { field: "low", type: "quantitative", title: "difference" },
          y2: { field: "band" },
          tooltip: [{ field: "x", type: "quantitative", title: fam.parameter ?? "" },
            { field: "band", type: "quantitative", title: "± chance envelope", format: ".3g" }] } },
      { mark: { type: "rule", color: "currentColor", opacity: 0.5, strokeDash: [3, 3] },
        encoding: { y: { datum: 0, type: "quantitative" } } },
      { mark: { type: "line", color: "currentColor", interpolate, point: { size: 14, filled: true, color: "currentColor" } },
        transform: [{ filter: "isValid(datum.diff)" }],
        encoding: { x, y: { field: "diff", type: "quantitative" },
          tooltip: [{ field: "x", type: "quantitative", title: fam.parameter ?? "" },
            { field: "diff", type: "quantitative", title: "observed difference", format: ".3g" }] } },
    ],
  } as VisualizationSpec;
}

export function createDifference(fam: FamilySpec, sets: string[], grid: Float64Array,
                                 curves: Curve[], envelope: PairEnvelope[],
                                 permutation: Permutation | null): Difference {
  const el = document.createElement("figure");
  el.className = "dp-difference";
  el.hidden = true;
  const title = document.createElement("figcaption");
  title.className = "dp-difference-title";
  const chart = document.createElement("div");
  chart.className = "dp-difference-chart";
  const note = document.createElement("p");
  note.className = "dp-difference-p";
  el.append(title, chart, note);
  let view: View | null = null;
  let embedding = false;
  let destroyed = false;
  let rows: object[] = [];

  function push() {
    if (!view) return;
    view.data("difference", rows);
    view.runAsync();
  }

  function ensureChart() {
    if (view || embedding) return;
    embedding = true;
    embed(chart, chartSpec(fam), { actions: false, renderer: "svg", logLevel: 1,
      tooltip: TOOLTIP_OPTIONS }).then((result) => {
      if (destroyed) {
        result.view.finalize();
        return;
      }
      view = result.view;
      push();
    });
  }

  function hide() {
    el.hidden = true;
    delete el.dataset.pair;
    delete el.dataset.points;
  }

  return {
    el,
    show(selected, lo, hi) {
      if (fam.parameter === null || envelope.length === 0 || selected.size !== 2) return hide();
      const picked = sets.map((s, k) => (selected.has(s) ? k : -1)).filter((k) => k >= 0);
      if (picked.length !== 2) return hide();
      const [a, b] = picked; // in the sets' order: A is the one listed first
      const pair = envelope.find((e) => e.a === a && e.b === b);
      if (!pair) return hide();
      const va = curves[a].values;
      const vb = curves[b].values;
      rows = [];
      let drawn = 0;
      for (let i = lo; i <= hi; i++) {
        const x = grid[i];
        if (!Number.isFinite(x) || (fam.axis === "log" && x <= 0)) continue;
        const d = va[i] === vb[i] ? 0 : va[i] - vb[i];
        const band = pair.band[i];
        const ok = Number.isFinite(band);
        if (ok) drawn++;
        rows.push({ x, diff: Number.isFinite(d) ? d : null, band: ok ? band : null, low: ok ? -band : null });
      }
      const level = permutation?.level ?? null;
      const shaded = level === null ? "shaded" : `shaded, ${fmt(100 * level)}%`;
      const A = sets[a];
      const B = sets[b];
      title.textContent = `${A} − ${B} (line) against what relabelling alone produces (${shaded})`;
      const R = permutation?.n_permutations ?? 0;
      const floor = R > 0 ? `; with ${R} relabellings no p-value is below ${fmt(1 / (R + 1))} ` +
        "before the adjustment" : "";
      note.textContent = `Permutation p-value (Holm): ${pText(pair.pHolm)}. Shaded: ±` +
        (level === null ? "the quantile" : `the ${fmt(100 * level)}% quantile`) +
        ` of |${A} − ${B}| at each ${fam.symbol || fam.parameter} over ${R} random relabellings ` +
        "of the two sets' pooled samples. The p-value tests the whole grid at once, not only " +
        "the domain shown" + (permutation?.holm ? ` (${permutation.holm})` : "") + floor + ".";
      el.dataset.pair = `${a},${b}`;
      el.dataset.points = String(drawn);
      el.dataset.pHolm = pair.pHolm === null ? "" : String(pair.pHolm);
      el.hidden = false;
      ensureChart();
      push();
    },
    destroy() {
      destroyed = true;
      view?.finalize();
      el.remove();
    },
  };
}
