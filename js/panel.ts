// One family's panel: a Vega-Lite chart of every set's curve, a two-handled
// domain slider, and the dominance matrix for the current domain: each cell shows the
// finding (what the samples support, verdict rule step 8), its title these samples' verdict.
import embed, { type VisualizationSpec } from "vega-embed";
import type { EventListenerHandler, View } from "vega";
import { PALETTE } from "./constants";
import { createDifference } from "./difference";
import { dataX, type PointDetail } from "./explain_panels";
import type { FamilySpec, PairEnvelope } from "./model";
import type { Permutation } from "./traits";
import { readingOf, symbolOf, uncertaintyReason, type Curve, type PairResult } from "./pairs";
import { amount, neededNote, percent } from "./wording";
import { NO_UNCERTAINTY, NOT_DISTINGUISHABLE, type Finding } from "./verdict";
import { CHART_CONFIG } from "./theme";

/** What a matrix cell shows: the finding (verdict rule step 8). */
const SYMBOL: Record<Finding, string> = { dominates: "≻", dominated: "≺", tied: "=", crosses: "×",
  [NOT_DISTINGUISHABLE]: "·", [NO_UNCERTAINTY]: "–" };
/** How a matrix reads: its caption, and the key under it (always shown, not a tooltip). */
export const READ_AS = "Each cell reads the row's set against the column's, over the domain " +
  "chosen above: what the samples support for every pair, point and family at once.";
export const KEY: [string, string][] = [
  ["≻", "row ahead"], ["≺", "column ahead"], ["=", "equal within the margin"],
  ["×", "they cross"], ["·", "not distinguishable at this sample size"],
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
  return `${a} vs ${b} in ${fam.long_name}: ${said[pair.finding]}` +
    (need ? ` (${need})` : "") +
    `; these samples: ${point[pair.verdict] ?? pair.verdict}` + (pair.crossings.length
      ? ` at ${symbolOf(fam)} ≈ ${pair.crossings.map(fmt).join(", ")}` : "") + dismissed + bounded;
}

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
    ...CHART_CONFIG,
    datasets: { curves: rows, domain, crossings: [] },
    resolve: { scale: { opacity: "independent" } }, // bands stay fainter than their curves
    layer: [
      { data: { name: "domain" }, mark: { type: "rect", opacity: 0.1, color: "#808080" },
        encoding: { x: { field: "lo", type: "quantitative", scale: x.scale }, x2: { field: "hi" } } },
      { data: { name: "curves" }, mark: { type: "area" },
        transform: [{ filter: "isValid(datum.lower)" }],
        encoding: { x, y: { field: "lower", type: "quantitative" }, y2: { field: "upper" },
          color, opacity: { field: "sel", type: "quantitative", scale: { domain: [0, 1], range: [0.03, 0.18] }, legend: null } } },
      { data: { name: "crossings" }, mark: { type: "rule", strokeDash: [4, 3], color: "currentColor", opacity: 0.7 },
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

  /** The shaded domain, drawable on the axis: q = 0 and q = inf map to the nearest drawn point. */
  function domainRow() {
    const drawable = (x: number) => (Number.isFinite(x) && (fam.axis !== "log" || x > 0) ? x : null);
    const loX = drawable(grid[lo]) ?? drawable(grid[Math.min(lo + 1, hi)]);
    const hiX = drawable(grid[hi]) ?? drawable(grid[Math.max(hi - 1, lo)]);
    return loX === null || hiX === null ? [] : [{ lo: loX, hi: hiX }];
  }
  function showRange() {
    label.textContent = `${symbolOf(fam)} ∈ [${fmt(grid[lo])}, ${fmt(grid[hi])}]`;
    difference.show(chosen, lo, hi);
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
      inputs[0].value = String(lo);
      inputs[1].value = String(hi);
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
          cell.textContent = pair ? SYMBOL[pair.finding] : "";
          if (!pair) return;
          cell.dataset.verdict = pair.finding; // what the samples support comes first
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
