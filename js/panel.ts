// One family's panel: a Vega-Lite chart of every set's curve, a two-handled
// domain slider, and the dominance matrix for the current domain.
import embed, { type VisualizationSpec } from "vega-embed";
import type { EventListenerHandler, View } from "vega";
import { MARGIN, MIN_SHARE, PALETTE } from "./constants";
import { dataX, type PointDetail } from "./explain_panels";
import type { ExplorerSpec, FamilySpec } from "./model";
import { amount, percent } from "./wording";
import {
  bandOfDifference, boundsVerdict, centredReplicates, confidentVerdict, crossings, margins,
  marginVerdict, separationSigns, shareAhead, signs, subsampleScale, tieTolerance,
  verdictOf, type BoundedVerdict, type ConfidentVerdict,
} from "./verdict";

const SYMBOL: Record<BoundedVerdict, string> = { dominates: "≻", dominated: "≺", tied: "=", crosses: "×",
  "bounds overlap": "≬" };
/** How a family's parameter is written in text (from the registry; the dimension name if absent). */
export const symbolOf = (fam: FamilySpec): string => fam.symbol || (fam.parameter ?? "");

export interface Curve {
  values: Float64Array;
  lower: Float64Array | null;
  upper: Float64Array | null;
  boot?: Float64Array[] | null; // half-sample replicates on the full grid
  bounds?: [Float64Array, Float64Array] | null; // large-n bounds the verdicts use (step 7)
}

export interface PairResult {
  a: number; b: number;
  verdict: BoundedVerdict; // with the margin (what compare's ``verdict`` says)
  plain: BoundedVerdict; // without it
  lead: number; // the dismissed side's largest lead (samples, or relative); NaN if none
  minorShare: number;
  confident: ConfidentVerdict | "no band"; // over this domain, simultaneous band
  crossings: number[]; share: number;
}

/** What the rule needs besides the curves: sizes, replicate scales, level, min share. */
export interface RuleContext {
  n: number[]; scales: number[] | null; caps: number[] | null; ci: number; minShare: number;
}

export function ruleContext(spec: ExplorerSpec): RuleContext {
  const n = (spec.n_samples ?? spec.sets.map(() => null)).map((x) => x ?? NaN);
  const m = spec.subsample_size;
  return {
    n,
    scales: m ? m.map((size, k) => subsampleScale(n[k], size)) : null,
    caps: m ? m.map((size, k) => n[k] / size) : null,
    ci: spec.ci ?? 0.95,
    minShare: spec.min_share ?? MIN_SHARE,
  };
}

/** Replicate errors of every set on the full grid (centring is pointwise: slice later). */
export function centredOf(fam: FamilySpec, curves: Curve[], ctx: RuleContext): Float64Array[][] | null {
  if (!ctx.scales || curves.some((c) => !c.boot)) return null;
  return curves.map((c, k) => centredReplicates(c.boot!, c.values, ctx.scales![k], ctx.caps![k]));
}

/** Verdicts of every ordered pair over grid indices [lo, hi] (the rule of verdict.ts). */
export function comparePairs(fam: FamilySpec, grid: Float64Array, curves: Curve[], lo: number,
                             hi: number, ctx?: RuleContext,
                             centred?: Float64Array[][] | null): PairResult[] {
  const theta = grid.subarray(lo, hi + 1);
  const rule = ctx ?? { n: curves.map(() => NaN), scales: null, caps: null, ci: 0.95, minShare: MIN_SHARE };
  const unit = fam.margin_unit ?? "relative";
  const margin = fam.margin ?? MARGIN;
  const axis = fam.parameter === null ? "none" : fam.axis;
  const out: PairResult[] = [];
  for (let a = 0; a < curves.length; a++) {
    for (let b = 0; b < curves.length; b++) {
      if (a === b) continue;
      const va = curves[a].values.subarray(lo, hi + 1);
      const vb = curves[b].values.subarray(lo, hi + 1);
      const nPair = Math.min(rule.n[a], rule.n[b]);
      const m = margins(va, vb, unit, margin, Number.isFinite(nPair) ? nPair : 0);
      const ba = curves[a].bounds;
      const bb = curves[b].bounds;
      let s = signs(va, vb);
      let da: Float64Array = va;
      let db: Float64Array = vb;
      let reading: { verdict: BoundedVerdict; lead: number; share: number };
      let plain: BoundedVerdict;
      if (ba && bb) { // step 7: only where the bounds separate
        const cut = (x: Float64Array) => x.subarray(lo, hi + 1);
        const [la, ha, lb, hb] = [cut(ba[0]), cut(ba[1]), cut(bb[0]), cut(bb[1])];
        const separated = separationSigns(la, ha, lb, hb);
        s = separated.s;
        da = separated.gap;
        db = new Float64Array(da.length);
        reading = boundsVerdict(theta, va, vb, [la, ha], [lb, hb], m, axis, fam.step, rule.minShare, unit);
        plain = boundsVerdict(theta, va, vb, [la, ha], [lb, hb], tieTolerance(va, vb), axis, fam.step,
          0, unit).verdict;
      } else {
        reading = marginVerdict(theta, va, vb, s, m, axis, fam.step, rule.minShare, unit);
        plain = verdictOf(s);
      }
      let confident: PairResult["confident"] = "no band";
      if (centred) {
        const [lower, upper] = bandOfDifference(va, vb,
          centred[a].map((r) => r.subarray(lo, hi + 1)), centred[b].map((r) => r.subarray(lo, hi + 1)),
          rule.ci, true);
        confident = confidentVerdict(theta, lower, upper, m, axis, fam.step, rule.minShare);
      }
      out.push({
        a, b, verdict: reading.verdict, plain, lead: reading.lead,
        minorShare: reading.share, confident,
        crossings: reading.verdict === "crosses" ? crossings(theta, da, db, s, axis, fam.step) : [],
        share: fam.parameter === null ? (s[0] > 0 ? 1 : 0) : shareAhead(theta, da, db, s, axis, fam.step),
      });
    }
  }
  return out;
}

function chartSpec(fam: FamilySpec, sets: string[], condition: string, rows: object[],
                   domain: object[]): VisualizationSpec {
  const x = {
    field: "x", type: "quantitative", title: `${fam.axis_title || fam.parameter}` +
      (fam.axis === "log" ? " (log)" : ""),
    scale: fam.axis === "log" ? { type: "log" as const } : { zero: false },
  } as const;
  const color = { field: "set", type: "nominal", scale: { domain: sets, range: PALETTE },
    legend: { title: "set", orient: "bottom" } } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: fam.long_name, subtitle: condition },
    width: 280, height: 170,
    datasets: { curves: rows, domain, crossings: [] },
    resolve: { scale: { opacity: "independent" } }, // bands stay fainter than their curves
    layer: [
      { data: { name: "domain" }, mark: { type: "rect", opacity: 0.08, color: "#000" },
        encoding: { x: { field: "lo", type: "quantitative", scale: x.scale }, x2: { field: "hi" } } },
      { data: { name: "curves" }, mark: { type: "area" },
        transform: [{ filter: "isValid(datum.lower)" }],
        encoding: { x, y: { field: "lower", type: "quantitative" }, y2: { field: "upper" },
          color, opacity: { field: "sel", type: "quantitative", scale: { domain: [0, 1], range: [0.03, 0.18] }, legend: null } } },
      { data: { name: "crossings" }, mark: { type: "rule", strokeDash: [4, 3], color: "#555" },
        encoding: { x: { field: "x", type: "quantitative", scale: x.scale },
          tooltip: [{ field: "pair", type: "nominal" }, { field: "x", type: "quantitative", title: "crossing" }] } },
      { data: { name: "curves" }, mark: { type: "line", interpolate: fam.step ? "step-after" : "linear" },
        // Brushing an x-range sets the domain slider (see the signal listener in createPanel).
        params: [{ name: "brush", select: { type: "interval", encodings: ["x"] } }],
        encoding: { x, y: { field: "value", type: "quantitative", title: fam.long_name }, color,
          opacity: { field: "sel", type: "quantitative", scale: { domain: [0, 1], range: [0.15, 1] }, legend: null },
          tooltip: [{ field: "set", type: "nominal" }, { field: "x", type: "quantitative", title: fam.parameter },
            { field: "value", type: "quantitative" }] } },
    ],
  };
}

/** Rows for Vega: finite, and positive on a log axis (q = 0 and q = inf are not drawn).
 *  ``sel`` is 1 for highlighted sets (all of them when none is). */
function rowsOf(fam: FamilySpec, sets: string[], grid: Float64Array, curves: Curve[],
                selected: Set<string> = new Set()) {
  const rows: object[] = [];
  curves.forEach((c, k) => {
    const sel = selected.size === 0 || selected.has(sets[k]) ? 1 : 0;
    for (let i = 0; i < grid.length; i++) {
      const x = grid[i];
      if (!Number.isFinite(x) || (fam.axis === "log" && x <= 0)) continue;
      rows.push({ set: sets[k], x, sel, value: c.values[i], lower: c.lower ? c.lower[i] : null,
        upper: c.upper ? c.upper[i] : null });
    }
  });
  return rows;
}

export interface Panel {
  el: HTMLElement;
  range(): [number, number]; // grid indices
  setRange(lo: number, hi: number): void;
  update(pairs: PairResult[]): void;
  highlight(selected: Set<string>): void;
  destroy(): void;
}

export function createPanel(fam: FamilySpec, sets: string[], condition: string, grid: Float64Array,
                            curves: Curve[], onRange: () => void, onReady: () => void,
                            onPick: (set: string) => void,
                            onExtend: (family: string, side: "low" | "high") => void): Panel {
  const el = document.createElement("section");
  el.className = "dp-panel";
  el.dataset.family = fam.name;
  const chart = document.createElement("div");
  chart.className = "dp-chart";
  const matrix = document.createElement("table");
  matrix.className = "dp-matrix";
  matrix.setAttribute("aria-label", `dominance matrix for ${fam.long_name}`);
  const cleanups: (() => void)[] = [];
  let view: View | null = null;
  let destroyed = false;
  let lastPairs: PairResult[] = [];
  let chosen = new Set<string>();

  /** Crossing rules for the pairs in view: all pairs, or those among highlighted sets. */
  function drawCrossings() {
    if (!view || fam.parameter === null) return;
    const shown = (k: number) => chosen.size === 0 || chosen.has(sets[k]);
    const rows = lastPairs
      .filter((p) => p.a < p.b && shown(p.a) && shown(p.b))
      .flatMap((p) => p.crossings.filter((x) => Number.isFinite(x) && (fam.axis !== "log" || x > 0))
        .map((x) => ({ x, pair: `${sets[p.a]} × ${sets[p.b]}` })));
    view.data("crossings", rows);
    view.runAsync();
  }
  let lo = 0;
  let hi = grid.length - 1;

  const sliders = document.createElement("div");
  sliders.className = "dp-sliders";
  const label = document.createElement("output");
  const inputs = ["lower", "upper"].map((end, k) => {
    const input = document.createElement("input");
    input.type = "range";
    input.min = "0";
    input.max = String(grid.length - 1);
    input.step = "1";
    input.value = String(k === 0 ? lo : hi);
    input.setAttribute("aria-label", `${end} end of the ${fam.parameter} domain of ${fam.long_name}`);
    const handler = () => {
      const a = Number(inputs[0].value);
      const b = Number(inputs[1].value);
      lo = Math.min(a, b);
      hi = Math.max(a, b);
      showRange();
      onRange();
    };
    input.addEventListener("input", handler);
    cleanups.push(() => input.removeEventListener("input", handler));
    sliders.append(input);
    return input;
  });
  sliders.append(label);
  // Families the registry marks extendable can grow: Python computes more points (kernel needed).
  if (fam.extendable) {
    for (const side of ["low", "high"] as const) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "dp-extend";
      button.dataset.side = side;
      button.textContent = side === "low" ? "◀ more" : "more ▶";
      button.setAttribute("aria-label",
        `compute more ${fam.parameter} values ${side === "low" ? "below" : "above"} the grid`);
      const click = () => onExtend(fam.name, side);
      button.addEventListener("click", click);
      cleanups.push(() => button.removeEventListener("click", click));
      if (side === "low") sliders.prepend(button);
      else sliders.append(button);
    }
  }

  const fmt = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(3)).toString() : "∞");
  /** The shaded domain, drawable on the axis: q = 0 and q = inf map to the nearest drawn point. */
  function domainRow() {
    const drawable = (x: number) => (Number.isFinite(x) && (fam.axis !== "log" || x > 0) ? x : null);
    const loX = drawable(grid[lo]) ?? drawable(grid[Math.min(lo + 1, hi)]);
    const hiX = drawable(grid[hi]) ?? drawable(grid[Math.max(hi - 1, lo)]);
    return loX === null || hiX === null ? [] : [{ lo: loX, hi: hiX }];
  }
  function showRange() {
    label.textContent = `${symbolOf(fam)} ∈ [${fmt(grid[lo])}, ${fmt(grid[hi])}]`;
    if (view) {
      view.data("domain", domainRow());
      view.runAsync();
    }
  }

  if (fam.parameter !== null) {
    const rows = rowsOf(fam, sets, grid, curves);
    const spec = chartSpec(fam, sets, condition, rows, domainRow());
    embed(chart, spec, { actions: false, renderer: "svg", logLevel: 1 /* errors only */ }).then((result) => {
      if (destroyed) {  // cleaned up while Vega was still compiling: release it now
        result.view.finalize();
        return;
      }
      view = result.view;
      const onBrush = (_: string, value: { x?: [number, number] } | null) => {
        if (!value?.x) return;
        const [a, b] = value.x;
        let i = 0;
        while (i < grid.length - 1 && !(grid[i] >= Math.min(a, b))) i++;
        let j = grid.length - 1;
        while (j > 0 && !(grid[j] <= Math.max(a, b))) j--;
        if (j >= i) {
          lo = i;
          hi = j;
          inputs[0].value = String(lo);
          inputs[1].value = String(hi);
          showRange();
          onRange();
        }
      };
      view.addSignalListener("brush", onBrush);
      cleanups.push(() => view?.removeSignalListener("brush", onBrush));
      // Clicking a curve (or its band) highlights that set in every chart.
      const onClick: EventListenerHandler = (event, item) => {
        const picked: unknown = item?.datum?.set;
        if (typeof picked === "string") onPick(picked);
        // The explanation panels open at the clicked parameter (explain_panels.ts).
        const detail: PointDetail = { family: fam.name, set: typeof picked === "string" ? picked : null,
          x: view ? dataX(view, event) : null };
        el.dispatchEvent(new CustomEvent("dp-point", { bubbles: true, detail }));
      };
      view.addEventListener("click", onClick);
      cleanups.push(() => view?.removeEventListener("click", onClick));
      showRange();
      drawCrossings();
      onReady();
    });
    el.append(chart, sliders);
  } else {
    const title = document.createElement("h4");
    title.textContent = fam.long_name;
    const values = document.createElement("p");
    values.textContent = sets.map((s, k) => `${s}: ${fmt(curves[k].values[0])}`).join(" · ");
    el.append(title, values);
  }
  el.append(matrix);
  showRange();

  return {
    el,
    range: () => [lo, hi],
    setRange(a: number, b: number) {
      lo = Math.max(0, Math.min(a, b));
      hi = Math.min(grid.length - 1, Math.max(a, b));
      inputs[0].value = String(lo);
      inputs[1].value = String(hi);
      showRange();
    },
    update(pairs: PairResult[]) {
      lastPairs = pairs;
      drawCrossings();
      matrix.replaceChildren();
      const head = matrix.insertRow();
      head.insertCell().textContent = "A \\ B";
      sets.forEach((s) => { head.insertCell().textContent = s; });
      sets.forEach((s, a) => {
        const row = matrix.insertRow();
        row.insertCell().textContent = s;
        sets.forEach((_, b) => {
          const cell = row.insertCell();
          const pair = pairs.find((p) => p.a === a && p.b === b);
          cell.textContent = pair ? SYMBOL[pair.verdict] : "";
          if (pair) {
            cell.dataset.verdict = pair.verdict;
            cell.dataset.confident = pair.confident;
            // ✓: the verdict holds with confidence over this whole domain; ?: it does not.
            if (pair.confident !== "no band") {
              const mark = document.createElement("sup");
              mark.className = "dp-conf";
              mark.textContent = pair.confident === pair.verdict ? "✓" : "?";
              cell.append(mark);
            }
            const dismissed = Number.isFinite(pair.lead)
              ? `; ${sets[pair.verdict === "dominates" ? b : a]} ahead by ${amount(pair.lead, fam.margin_unit ?? "relative")}` +
                (fam.parameter === null ? "" : ` on ${percent(pair.minorShare)} of the domain`) +
                " is within the margin" : "";
            const sure = (pair.confident === "no band" ? "; no confidence band"
              : `; with confidence over this domain: ${pair.confident}`) +
              (fam.method && fam.method !== "exact"
                ? `; values are ${fam.method}: a verdict holds only where the bounds separate` : "");
            cell.title = `${sets[a]} vs ${sets[b]}: ${pair.verdict}` + (pair.crossings.length
              ? ` at ${symbolOf(fam)} ≈ ${pair.crossings.map(fmt).join(", ")}` : "") + dismissed + sure;
          }
        });
      });
    },
    highlight(selected: Set<string>) {
      chosen = selected;
      if (!view || fam.parameter === null) return;
      view.data("curves", rowsOf(fam, sets, grid, curves, selected));
      view.runAsync();
      drawCrossings();
    },
    destroy() {
      destroyed = true;
      cleanups.forEach((f) => f());
      view?.finalize();
      el.remove();
    },
  };
}
