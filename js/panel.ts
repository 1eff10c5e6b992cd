// One family's panel: a Vega-Lite chart of every set's curve, a two-handled
// domain control (range.ts), and the dominance matrix for the current domain: each cell shows the
// finding (what the samples support, verdict rule step 8), its title these samples' verdict.
import embed, { type VisualizationSpec } from "vega-embed";
import type { EventListenerHandler, View } from "vega";
import { PALETTE } from "./constants";
import { createDifference } from "./difference";
import { dataX, plotPoint, type PointDetail } from "./explain_panels";
import type { FamilySpec, PairEnvelope } from "./model";
import type { Permutation } from "./traits";
import { readingOf, symbolOf, uncertaintyReason, type Curve, type PairResult } from "./pairs";
import { amount, neededNote, partClaim, percent } from "./wording";
import { NO_UNCERTAINTY, NOT_DISTINGUISHABLE, type Finding } from "./verdict";
import { CHART_CONFIG, TOOLTIP_OPTIONS } from "./theme";
import { createRange } from "./range";

/** What a matrix cell shows: the finding (verdict rule step 8). */
const SYMBOL: Record<Finding, string> = { dominates: "≻", dominated: "≺", tied: "=", crosses: "×",
  [NOT_DISTINGUISHABLE]: "·", [NO_UNCERTAINTY]: "–" };
/** How a matrix reads: its caption, and the key under it (always shown, not a tooltip). */
export const READ_AS = "Each cell reads the row's set against the column's, over the domain " +
  "chosen above: what the samples support for every pair, point and family at once.";
export const KEY: [string, string][] = [
  ["≻", "row ahead"], ["≺", "column ahead"], ["=", "equal within the margin"],
  ["×", "they cross"], ["·", "not distinguishable at this sample size"],
  ["(≻)", "row ahead on part of the domain only"], ["(≺)", "column ahead on part of it only"],
  ["–", "no sampling uncertainty (hover or focus a cell for these samples' verdict)"],
];
/** The key as one line of text (the report's and the tests' reference). */
export const LEGEND = KEY.map(([symbol, meaning]) => `${symbol} ${meaning}`).join(", ");

const fmt = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(3)).toString() : "∞");

/** A cell's title and accessible text, from the row's side: the finding ("k=2 vs k=1 in
 *  Vendi score: k=2 ahead, supported at 95%"), then these samples' verdict. */
function cellText(fam: FamilySpec, a: string, b: string, pair: PairResult, level: number): string {
  const supported = `supported at ${percent(level)}`;
  const said: Record<Finding, string> = {
    dominates: `${a} ahead, ${supported}`, dominated: `${b} ahead, ${supported}`,
    crosses: `they cross, ${supported}`, tied: `equal within the margin, ${supported}`,
    [NOT_DISTINGUISHABLE]: "not distinguishable at this sample size",
    [NO_UNCERTAINTY]: `no finding, no sampling uncertainty (${uncertaintyReason(fam)})`,
  };
  const point: Record<string, string> = {
    dominates: `${a} ahead`, dominated: `${b} ahead`, crosses: "they cross",
    tied: "equal within the margin", "bounds overlap": "the bounds overlap",
  };
  const need = neededNote(a, b, [readingOf(fam, pair)]);
  const unit = fam.margin_unit ?? "relative";
  const dismissed = Number.isFinite(pair.lead)
    ? `; ${pair.verdict === "dominates" ? b : a} ahead by ${amount(pair.lead, unit)}` +
      (fam.parameter === null ? "" : ` on ${percent(pair.minorShare)} of the domain`) +
      " is within the margin" : "";
  const bounded = fam.method && fam.method !== "exact"
    ? `; values are ${fam.method}: a verdict holds only where the bounds separate` : "";
  // Ordered on part of the domain only (verdict rule step 9): where, then the rest.
  const found = pair.parts.length ? `${partClaim(a, b, readingOf(fam, pair))}, ${supported}; ` +
    "not distinguishable elsewhere at this sample size" : said[pair.finding];
  return `${a} vs ${b} in ${fam.long_name}: ${found}` +
    (need ? ` (${need})` : "") +
    `; these samples: ${point[pair.verdict] ?? pair.verdict}` + (pair.crossings.length
      ? ` at ${symbolOf(fam)} ≈ ${pair.crossings.map(fmt).join(", ")}` : "") + dismissed + bounded;
}

/** A set's value as tooltips write it: 3 significant figures, counts exact. */
const valueText = (fam: FamilySpec, v: number | null | undefined) =>
  v === null || v === undefined || Number.isNaN(v) ? "—"
    : fam.integer && Number.isInteger(v) ? String(v) : fmt(v);

/** vega-tooltip reads the keys "title" and "image" as a heading and a picture: a set of
 *  that name gets a trailing space instead. */
const tooltipKey = (name: string) => (name === "title" || name === "image" ? `${name} ` : name);

/** Arrow keys, Home and End move between a matrix's cells (one of them in the tab order);
 *  Enter and Space open the cell's explanation, as a click does. */
function matrixKeys(matrix: HTMLTableElement, event: KeyboardEvent) {
  const cell = (event.target as Element | null)?.closest?.("td[data-verdict]") as HTMLTableCellElement | null;
  if (!cell) return;
  if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    cell.click();
    return;
  }
  const cells = [...matrix.querySelectorAll<HTMLTableCellElement>("td[data-verdict]")];
  const row = (cell.parentElement as HTMLTableRowElement).rowIndex;
  const at = (r: number, c: number) => cells.find((x) =>
    (x.parentElement as HTMLTableRowElement).rowIndex === r && x.cellIndex === c);
  const k = cells.indexOf(cell);
  const next = {
    ArrowRight: at(row, cell.cellIndex + 1), ArrowLeft: at(row, cell.cellIndex - 1),
    ArrowDown: at(row + 1, cell.cellIndex), ArrowUp: at(row - 1, cell.cellIndex),
    Home: cells[0], End: cells[cells.length - 1],
  }[event.key] ?? (event.key.startsWith("Arrow") ? cells[k] : undefined);
  if (!next) return;
  event.preventDefault();
  cells.forEach((x) => { x.tabIndex = x === next ? 0 : -1; });
  next.focus();
}

function chartSpec(fam: FamilySpec, sets: string[], condition: string, rows: object[],
                   hover: object[], domain: object[], xDomain: [number, number]): VisualizationSpec {
  const fitted = { domain: xDomain, nice: false };
  const x = {
    field: "x", type: "quantitative", title: `${fam.axis_title || fam.parameter}` +
      (fam.axis === "log" ? " (log)" : ""),
    scale: fam.axis === "log" ? { type: "log" as const, ...fitted } : { zero: false, ...fitted },
  } as const;
  const color = { field: "set", type: "nominal", scale: { domain: sets, range: PALETTE },
    legend: { title: "set", orient: "bottom" } } as const;
  const shown = { condition: { param: "hover", empty: false, value: 1 }, value: 0 } as const;
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title: { text: fam.long_name, subtitle: condition },
    // As wide as the panel (createPanel follows its size), so the grid decides the width.
    width: "container", height: 190,
    ...CHART_CONFIG,
    datasets: { curves: rows, hover, domain, crossings: [] },
    resolve: { scale: { opacity: "independent" } }, // bands stay fainter than their curves
    layer: [
      { data: { name: "domain" }, mark: { type: "rect", opacity: 0.1, color: "#808080" },
        encoding: { x: { field: "lo", type: "quantitative", scale: x.scale }, x2: { field: "hi" } } },
      // What the shading is: the domain the verdicts compare over.
      { data: { name: "domain" }, mark: { type: "text", baseline: "top", dy: 3, fontSize: 10,
        color: "currentColor", opacity: 0.8, limit: 200, align: { expr: "datum.align" },
        dx: { expr: "datum.align === 'right' ? -3 : 3" } },
        encoding: { x: { field: "at", type: "quantitative", scale: x.scale }, y: { value: 0 },
          text: { field: "label" } } },
      { data: { name: "curves" }, mark: { type: "area" },
        transform: [{ filter: "isValid(datum.lower)" }],
        encoding: { x, y: { field: "lower", type: "quantitative" }, y2: { field: "upper" },
          color, opacity: { field: "sel", type: "quantitative", scale: { domain: [0, 1], range: [0.03, 0.18] }, legend: null } } },
      { data: { name: "curves" }, mark: { type: "line", interpolate: fam.step ? "step-after" : "linear" },
        // Brushing an x-range sets the domain slider (see the signal listener in createPanel).
        params: [{ name: "brush", select: { type: "interval", encodings: ["x"] } }],
        encoding: { x, y: { field: "value", type: "quantitative", title: fam.long_name }, color,
          opacity: { field: "sel", type: "quantitative", scale: { domain: [0, 1], range: [0.15, 1] }, legend: null } } },
      // Hovering anywhere picks the nearest grid point (a Voronoi over x): a rule there, a
      // point on every curve, and a tooltip with every set's value (3 significant figures).
      { data: { name: "curves" }, mark: { type: "point", filled: true, size: 36 },
        transform: [{ filter: "isValid(datum.value)" }],
        encoding: { x, y: { field: "value", type: "quantitative" }, color, opacity: shown } },
      { data: { name: "hover" }, mark: { type: "rule", color: "currentColor", strokeDash: [2, 2] },
        params: [{ name: "hover", select: { type: "point", fields: ["i"], nearest: true,
          on: "pointerover", clear: "pointerout" } }],
        encoding: { x: { field: "x", type: "quantitative", scale: x.scale }, opacity: shown,
          tooltip: [{ field: "head", type: "nominal", title: "title" },
            ...sets.map((name, k) => ({ field: `s${k}`, type: "nominal" as const, title: tooltipKey(name) }))] } },
      { data: { name: "crossings" }, mark: { type: "rule", strokeDash: [4, 3], color: "currentColor", opacity: 0.7 },
        encoding: { x: { field: "x", type: "quantitative", scale: x.scale },
          tooltip: [{ field: "pair", type: "nominal" }, { field: "at", type: "nominal", title: "crossing" }] } },
    ],
  } as VisualizationSpec;
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
      if (!drawable(fam, x)) continue;
      rows.push({ set: sets[k], i, x, sel, value: c.values[i], lower: c.lower ? c.lower[i] : null,
        upper: c.upper ? c.upper[i] : null });
    }
  });
  return rows;
}

/** A parameter value the chart can draw: finite, and positive on a log axis. */
const drawable = (fam: FamilySpec, x: number) => Number.isFinite(x) && (fam.axis !== "log" || x > 0);

/** One row per drawn grid point: what the hover tooltip says there (text, already rounded;
 *  the band in brackets where there is one). */
function hoverRowsOf(fam: FamilySpec, grid: Float64Array, curves: Curve[]) {
  const rows: object[] = [];
  for (let i = 0; i < grid.length; i++) {
    if (!drawable(fam, grid[i])) continue;
    const row: Record<string, string | number> = { i, x: grid[i],
      head: `${fam.long_name} at ${symbolOf(fam)} = ${fmt(grid[i])}` };
    curves.forEach((c, k) => {
      const band = c.lower && c.upper && Number.isFinite(c.lower[i]) && Number.isFinite(c.upper[i])
        ? ` [${valueText(fam, c.lower[i])}, ${valueText(fam, c.upper[i])}]` : "";
      row[`s${k}`] = valueText(fam, c.values[i]) + band;
    });
    rows.push(row);
  }
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
                            onExtend: (family: string, side: "low" | "high") => void,
                            envelope: PairEnvelope[] = [],
                            permutation: Permutation | null = null, level = 0.95): Panel {
  const el = document.createElement("section");
  el.className = "dp-panel";
  el.dataset.family = fam.name;
  const chart = document.createElement("div");
  chart.className = "dp-chart";
  const matrix = document.createElement("table");
  matrix.className = "dp-matrix";
  matrix.setAttribute("aria-label", `dominance matrix for ${fam.long_name}`);
  const onMatrixKey = (event: KeyboardEvent) => matrixKeys(matrix, event);
  matrix.addEventListener("keydown", onMatrixKey);
  const cleanups: (() => void)[] = [() => matrix.removeEventListener("keydown", onMatrixKey)];
  let view: View | null = null;
  let destroyed = false;
  let lastPairs: PairResult[] = [];
  let chosen = new Set<string>();
  // Two highlighted sets and a permutation test: their difference against chance (difference.ts).
  const difference = createDifference(fam, sets, grid, curves, envelope, permutation);

  // The x axis spans the drawn grid, no further (it ran 0.1–10 for data in 0.37–3.87).
  const xs = Array.from(grid).filter((x) => drawable(fam, x));
  const xDomain: [number, number] = xs.length ? [Math.min(...xs), Math.max(...xs)] : [0, 1];

  /** The set whose curve is drawn within a few pixels of the pointer, near grid index i
   *  (the line between grid points as drawn: linear, or held until the next point for a
   *  step family), or null. Hit-testing only: the values are those Python sent. */
  function curveNear(v: View, event: Event, i: number, tolerance = 6): string | null {
    const at = plotPoint(v, event);
    const xs = v.scale("x") as (x: number) => number;
    const ys = v.scale("y") as (y: number) => number;
    if (!at || !xs || !ys) return null;
    const [px, py] = at;
    const j = px >= xs(grid[i]) ? i + 1 : i - 1;
    const other = j >= 0 && j < grid.length && drawable(fam, grid[j]) ? j : i;
    let best: string | null = null;
    let gap = tolerance;
    curves.forEach((c, k) => {
      const [a, b] = other > i ? [i, other] : [other, i];
      const xa = xs(grid[a]);
      const xb = xs(grid[b]);
      const ya = ys(c.values[a]);
      const yb = ys(c.values[b]);
      const y = fam.step || xb === xa ? (px < xb ? ya : yb) : ya + (yb - ya) * (px - xa) / (xb - xa);
      if (Number.isFinite(y) && Math.abs(py - y) <= gap) [best, gap] = [sets[k], Math.abs(py - y)];
    });
    return best;
  }

  /** Crossing rules for the pairs in view: all pairs, or those among highlighted sets. */
  function drawCrossings() {
    if (!view || fam.parameter === null) return;
    const shown = (k: number) => chosen.size === 0 || chosen.has(sets[k]);
    const rows = lastPairs
      .filter((p) => p.a < p.b && shown(p.a) && shown(p.b))
      .flatMap((p) => p.crossings.filter((x) => Number.isFinite(x) && (fam.axis !== "log" || x > 0))
        .map((x) => ({ x, at: `${symbolOf(fam)} ≈ ${fmt(x)}`, pair: `${sets[p.a]} × ${sets[p.b]}` })));
    view.data("crossings", rows);
    view.runAsync();
  }
  let lo = 0;
  let hi = grid.length - 1;

  const sliders = document.createElement("div");
  sliders.className = "dp-sliders";
  // One control per family: a track with two handles, saying what it does.
  const sym = symbolOf(fam);
  const range = createRange({
    max: grid.length - 1,
    label: (a, b) => `compare over ${sym} ∈ [${fmt(grid[a])}, ${fmt(grid[b])}]`,
    handleLabels: [`lower end of the ${sym} range ${fam.long_name} is compared over`,
      `upper end of the ${sym} range ${fam.long_name} is compared over`],
    valueText: (i) => `${sym} = ${fmt(grid[i])}`,
    onChange(a, b) {
      [lo, hi] = [a, b];
      showRange();
      onRange();
    },
  });
  cleanups.push(() => range.destroy());
  sliders.append(range.el);
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

  /** The shaded domain, drawable on the axis: q = 0 and q = inf map to the nearest drawn point. */
  function domainRow() {
    const shown = (x: number) => (drawable(fam, x) ? x : null);
    const loX = shown(grid[lo]) ?? shown(grid[Math.min(lo + 1, hi)]);
    const hiX = shown(grid[hi]) ?? shown(grid[Math.max(hi - 1, lo)]);
    if (loX === null || hiX === null) return [];
    // The label sits inside the shading, from its left edge; from its right edge when the
    // shading starts in the right half of the axis (so that it stays on the chart).
    const [a, b] = xDomain;
    const pos = (x: number) => (fam.axis === "log" ? Math.log(x / a) / Math.log(b / a) : (x - a) / (b - a));
    const right = pos(loX) > 0.5;
    return [{ lo: loX, hi: hiX, at: right ? hiX : loX, align: right ? "right" : "left",
      label: `compared: ${symbolOf(fam)} ∈ [${fmt(grid[lo])}, ${fmt(grid[hi])}]` }];
  }
  function showRange() {
    difference.show(chosen, lo, hi);
    if (view) {
      view.data("domain", domainRow());
      view.runAsync();
    }
  }

  if (fam.parameter !== null) {
    const rows = rowsOf(fam, sets, grid, curves);
    const spec = chartSpec(fam, sets, condition, rows, hoverRowsOf(fam, grid, curves), domainRow(),
      xDomain);
    embed(chart, spec, { actions: false, renderer: "svg", logLevel: 1 /* errors only */,
      tooltip: TOOLTIP_OPTIONS }).then((result) => {
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
          range.set(lo, hi);
          showRange();
          onRange();
        }
      };
      view.addSignalListener("brush", onBrush);
      cleanups.push(() => view?.removeSignalListener("brush", onBrush));
      // Clicking a curve (or its band) highlights that set in every chart.
      const onClick: EventListenerHandler = (event, item) => {
        // The nearest-point layer lies on top: a click lands in a grid point's cell (its
        // datum is the hover row), and picks the curve drawn within a few pixels there.
        const hit = item as { datum?: Record<string, unknown>; isVoronoi?: boolean } | null | undefined;
        const row = (hit?.isVoronoi ? hit.datum?.datum : hit?.datum) as Record<string, unknown> | undefined;
        const index = typeof row?.i === "number" ? row.i : null;
        let picked = typeof row?.set === "string" ? row.set : null;
        if (picked === null && index !== null && view) picked = curveNear(view, event, index);
        if (picked !== null) onPick(picked);
        // The explanation panels open at the clicked parameter (explain_panels.ts).
        const detail: PointDetail = { family: fam.name, set: picked,
          x: index !== null ? grid[index] : view ? dataX(view, event) : null };
        el.dispatchEvent(new CustomEvent("dp-point", { bubbles: true, detail }));
      };
      view.addEventListener("click", onClick);
      cleanups.push(() => view?.removeEventListener("click", onClick));
      // Vega reads the container's width on window resizes only; an output area resizes
      // without one (JupyterLab's side panels, the grid's columns): follow the element.
      let frame = 0;
      const resize = new ResizeObserver(() => {
        cancelAnimationFrame(frame);
        frame = requestAnimationFrame(() => {
          const width = chart.clientWidth;
          if (view && width > 0 && width !== view.width()) view.width(width).runAsync();
        });
      });
      resize.observe(chart);
      cleanups.push(() => { resize.disconnect(); cancelAnimationFrame(frame); });
      showRange();
      drawCrossings();
      onReady();
    });
    el.append(chart, sliders, difference.el);
  } else {
    const title = document.createElement("h4");
    title.textContent = fam.long_name;
    const values = document.createElement("p");
    values.textContent = sets.map((s, k) => `${s}: ${fmt(curves[k].values[0])}`).join(" · ");
    el.append(title, values);
  }
  // The key stays on the page beside every matrix: no symbol needs a tooltip to be read.
  const legend = document.createElement("ul");
  legend.className = "dp-legend";
  legend.setAttribute("aria-label", `key to the dominance matrix for ${fam.long_name}`);
  for (const [symbol, meaning] of KEY) {
    const item = document.createElement("li");
    const mark = document.createElement("span");
    mark.className = "dp-symbol";
    mark.setAttribute("aria-hidden", "true");
    mark.textContent = symbol;
    item.append(mark, ` ${meaning}`);
    legend.append(item);
  }
  el.append(matrix, legend);
  showRange();

  return {
    el,
    range: () => [lo, hi],
    setRange(a: number, b: number) {
      lo = Math.max(0, Math.min(a, b));
      hi = Math.min(grid.length - 1, Math.max(a, b));
      range.set(lo, hi);
      showRange();
    },
    update(pairs: PairResult[]) {
      lastPairs = pairs;
      drawCrossings();
      // One triangle: the row's set against each later column's (row i, column j > i);
      // the cells below the diagonal would say the same from the other side.
      const focused = matrix.contains(document.activeElement)
        ? (document.activeElement as HTMLTableCellElement) : null;
      const at = focused ? [(focused.parentElement as HTMLTableRowElement).rowIndex, focused.cellIndex] : null;
      matrix.replaceChildren();
      const caption = matrix.createCaption();
      caption.textContent = READ_AS;
      const head = matrix.insertRow();
      const corner = document.createElement("th");
      corner.scope = "col";
      corner.textContent = "row vs column →";
      head.append(corner);
      sets.forEach((s) => {
        const th = document.createElement("th");
        th.scope = "col";
        th.textContent = s;
        head.append(th);
      });
      let first = true;
      sets.forEach((s, a) => {
        const row = matrix.insertRow();
        const th = document.createElement("th");
        th.scope = "row";
        th.textContent = s;
        row.append(th);
        sets.forEach((_, b) => {
          const cell = row.insertCell();
          const pair = b > a ? pairs.find((p) => p.a === a && p.b === b) : undefined;
          // Labels are untrusted: every text here goes in as textContent or an attribute.
          if (!pair) return;
          // A pair ordered on part of the domain only (step 9): the side, in parentheses.
          const part = pair.parts.length ? (pair.partSide > 0 ? "(≻)" : "(≺)") : "";
          cell.textContent = part || SYMBOL[pair.finding];
          cell.dataset.verdict = pair.finding; // what the samples support comes first
          if (part) cell.dataset.part = pair.partSide > 0 ? "dominates" : "dominated";
          cell.dataset.point = pair.verdict; // these samples' own verdict (margin included)
          cell.dataset.confident = pair.confident;
          const text = cellText(fam, sets[a], sets[b], pair, level);
          cell.title = text;
          cell.setAttribute("aria-label", text);
          cell.tabIndex = first ? 0 : -1;
          first = false;
        });
      });
      if (at) {  // keep the keyboard where it was across a recompute
        const again = matrix.rows[at[0]]?.cells[at[1]];
        if (again?.dataset.verdict) {
          matrix.querySelectorAll<HTMLTableCellElement>("td[data-verdict]").forEach((x) => {
            x.tabIndex = x === again ? 0 : -1; });
          again.focus();
        }
      }
    },
    highlight(selected: Set<string>) {
      chosen = selected;
      difference.show(chosen, lo, hi);
      if (!view || fam.parameter === null) return;
      view.data("curves", rowsOf(fam, sets, grid, curves, selected));
      view.runAsync();
      drawCrossings();
    },
    destroy() {
      destroyed = true;
      cleanups.forEach((f) => f());
      difference.destroy();
      view?.finalize();
      el.remove();
    },
  };
}
