// The diversity-profiles explorer (shared by the widget, the report and the JupyterLab
// extension): one panel per family, live domain sliders,
// dominance matrices and a plain-language summary for the current domains.
// Every label is user data and is written with textContent, never as HTML.
import { DIFFERENCE_STYLE } from "./difference";
import { createExplainPanels, EXPLAIN_STYLE } from "./explain_panels";
import { bind, readFamily, type ExplorerSpec, type Model } from "./model";
import { createPanel, type Panel } from "./panel";
import {
  centredOf, comparePairs, readingOf, ruleContext, uncertaintyReason, type PairResult,
} from "./pairs";
import { MARGIN, PALETTE } from "./constants";
import { NO_UNCERTAINTY } from "./verdict";
import {
  detailsTitle, findingIntro, headlineLines, pairBlock, ruleLines, type Reading,
} from "./wording";
import { decodeDomain, encodeBound } from "./domains";
import type { Domain } from "./traits";
import { THEME_STYLE } from "./theme";
import { RANGE_STYLE } from "./range";

const STYLE = `
.dp-explorer { font: 13px var(--jp-ui-font-family, system-ui, sans-serif); }
.dp-explorer .dp-grid {
  display: grid; gap: 12px; grid-auto-flow: row dense;
  grid-template-columns: repeat(auto-fit, minmax(min(100%, 380px), 1fr));
}
.dp-explorer .dp-panel { border: 1px solid var(--dp-border); border-radius: 6px; padding: 8px;
  min-width: 0; overflow-x: auto; }
.dp-explorer .dp-panel .dp-chart { width: 100%; }
.dp-explorer .dp-loading { color: var(--dp-muted); padding: 24px 8px; font-style: italic; }
.dp-explorer .dp-sliders { display: flex; gap: 6px; align-items: center; }
.dp-explorer .dp-matrix { border-collapse: collapse; }
.dp-explorer .dp-matrix caption { caption-side: top; text-align: left; color: var(--dp-muted);
  font-size: 12px; max-width: 340px; margin-bottom: 2px; }
.dp-explorer .dp-matrix th { font-weight: normal; padding: 1px 6px; text-align: left; }
.dp-explorer .dp-matrix td { padding: 1px 6px; text-align: center; font-size: 16px; min-width: 1.5em; }
.dp-explorer .dp-matrix td[data-verdict] { cursor: pointer; }
.dp-explorer .dp-matrix td[data-verdict]:focus-visible { outline: 2px solid var(--dp-focus); outline-offset: -2px; }
.dp-explorer .dp-matrix td[data-verdict="dominates"] { color: var(--dp-good); font-weight: bold; }
.dp-explorer .dp-matrix td[data-verdict="dominated"] { color: var(--dp-bad); }
.dp-explorer .dp-matrix td[data-verdict="not distinguishable"],
.dp-explorer .dp-matrix td[data-verdict="no uncertainty"] { color: var(--dp-muted); }
.dp-explorer .dp-matrix td[data-part="dominates"] { color: var(--dp-good); }
.dp-explorer .dp-matrix td[data-part="dominated"] { color: var(--dp-bad); }
.dp-explorer .dp-legend { color: var(--dp-muted); font-size: 12px; max-width: 340px; margin: 4px 0 0;
  padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 2px 12px; }
.dp-explorer .dp-legend .dp-symbol { font-size: 16px; color: var(--dp-fg); }
.dp-explorer .dp-summary { white-space: pre-wrap; margin: 8px 0; }
.dp-explorer .dp-summary summary { cursor: pointer; }
.dp-explorer .dp-sets button { border: 2px solid; border-radius: 12px; margin: 0 4px 6px 0; }
.dp-explorer .dp-status { color: var(--dp-link); min-height: 1.2em; }
.dp-explorer.dp-offline .dp-extend { display: none; }
.dp-explorer .dp-sets button[aria-pressed="true"] { background: var(--dp-pressed); font-weight: bold; }
`;

/** Plain-language lines for the current domains: summary.py's plain text (markdown=False)
 *  without the condition's facts, in js/wording.ts's port of its wording. ``head``: what the
 *  findings hold with, one sentence per family, the pairs that cross or are undecided, and
 *  the margins; ``title`` and ``pairs``: each pair in detail (shown behind a disclosure). */
export function summarize(spec: ExplorerSpec, results: Map<string, PairResult[]>):
    { head: string[]; title: string; pairs: string[] } {
  const ctx = ruleContext(spec);
  const without = spec.families
    .filter((f) => results.get(f.name)?.some((p) => p.finding === NO_UNCERTAINTY))
    .map((f): [string, string] => [f.long_name, uncertaintyReason(f)]);
  const banded = spec.finding_families ?? spec.families.length - without.length;
  const sets = spec.sets;
  const pairs: [number, number, Reading[]][] = [];
  for (let a = 0; a < sets.length; a++) {
    for (let b = a + 1; b < sets.length; b++) {
      const readings: Reading[] = [];
      for (const fam of spec.families) {
        const pair = results.get(fam.name)?.find((p) => p.a === a && p.b === b);
        if (pair) readings.push(readingOf(fam, pair));
      }
      pairs.push([a, b, readings]);
    }
  }
  const head = [
    ...findingIntro(spec.finding_level ?? 0.95, without, banded), "",
    ...headlineLines(sets, spec.families.map((f) => f.long_name), pairs, false), "",
    ...ruleLines(
      spec.families.map((f): [string, number, string] => [f.long_name, f.margin ?? MARGIN,
        f.margin_unit ?? "relative"]),
      ctx.minShare,
      spec.families.filter((f) => f.method && f.method !== "exact")
        .map((f): [string, string] => [f.long_name, f.method as string])),
  ];
  return { head, title: detailsTitle(pairs.length),
    pairs: pairs.flatMap(([a, b, readings]) => pairBlock(sets[a], sets[b], readings)) };
}

/** Draw the explorer for a model into ``el``; returns the cleanup function. */
export function render({ model, el }: { model: Model; el: HTMLElement }): () => void {
  const root = document.createElement("div");
  root.className = "dp-explorer";
  // Keys pressed on the explorer's sliders, buttons and menus are the explorer's (arrow keys
  // moved between cells and collapsed headings instead of moving the slider). Lumino skips
  // shortcuts for an element carrying this attribute, but it stops at the first element a
  // shortcut's selector matches, and ".jp-Notebook.jp-mod-commandMode :focus" matches the
  // focused control itself: so the attribute goes on whatever takes focus in the explorer.
  const suppressShortcuts = (event: FocusEvent) => {
    if (event.target instanceof Element) event.target.setAttribute("data-lm-suppress-shortcuts", "true");
  };
  root.addEventListener("focusin", suppressShortcuts);
  // Without a kernel nothing can compute more grid points: no buttons that do nothing.
  root.classList.toggle("dp-offline", model.live === false);
  const style = document.createElement("style");
  style.textContent = THEME_STYLE + STYLE + RANGE_STYLE + EXPLAIN_STYLE + DIFFERENCE_STYLE;
  const heading = document.createElement("h3");
  const chooser = document.createElement("select");
  chooser.setAttribute("aria-label", "condition");
  const choose = () => {
    model.set("condition", chooser.value);
    model.save_changes();
  };
  chooser.addEventListener("change", choose);
  const setBar = document.createElement("div");
  setBar.className = "dp-sets";
  setBar.setAttribute("role", "group");
  setBar.setAttribute("aria-label", "highlight sets");
  const grid = document.createElement("div");
  grid.className = "dp-grid";
  const status = document.createElement("div");
  status.className = "dp-status";
  status.setAttribute("role", "status");
  const showStatus = () => { status.textContent = model.get("status") ?? ""; };
  // The summary leads: the finding and the headline, each pair's detail behind a disclosure.
  const summary = document.createElement("div");
  summary.className = "dp-summary";
  // Until the first charts are drawn (Vega compiles them asynchronously).
  const loading = document.createElement("div");
  loading.className = "dp-loading";
  loading.setAttribute("role", "status");
  loading.textContent = "Drawing profiles…";
  const summaryHead = document.createElement("div");
  summaryHead.className = "dp-headline";
  summaryHead.setAttribute("aria-live", "polite");
  const pairDetails = document.createElement("details");
  pairDetails.className = "dp-pair-details";
  const pairTitle = document.createElement("summary");
  const pairLines = document.createElement("div");
  pairDetails.append(pairTitle, pairLines);
  summary.append(summaryHead, pairDetails);
  root.append(style, heading, chooser, setBar, status, summary, loading, grid);
  // "Why does it say that?" (hidden unless the tree holds dp.explain's nodes).
  const explain = createExplainPanels(model, root);
  root.append(explain.el);
  el.append(root);

  let panels: {
    panel: Panel; fam: ExplorerSpec["families"][number]; data: ReturnType<typeof readFamily>;
    centred: Float64Array[][] | null;
    /** The last comparison and the domain it was made over: a step on one family's
     *  control recomputes that family only (the input path stays short). */
    last: { lo: number; hi: number; pairs: PairResult[] } | null;
  }[] = [];

  function recompute() {
    const spec = model.get("spec");
    const ctx = ruleContext(spec);
    const results = new Map<string, PairResult[]>();
    for (const entry of panels) {
      const { panel, fam, data, centred, last } = entry;
      const [lo, hi] = panel.range();
      if (!last || last.lo !== lo || last.hi !== hi) {
        const pairs = comparePairs(fam, data.grid, data.curves, lo, hi, ctx, centred);
        panel.update(pairs);
        entry.last = { lo, hi, pairs };
      }
      results.set(fam.name, entry.last!.pairs);
    }
    const said = summarize(spec, results);
    // Labels are untrusted: text only (textContent), lines kept by the pre-wrap style.
    summaryHead.textContent = said.head.join("\n") + "\n";
    pairTitle.textContent = said.title;
    pairLines.textContent = "\n" + said.pairs.join("\n");
  }

  // A step on a domain control repaints its chart at once (panel.ts); the matrices, the
  // summary and the sync to Python follow after that frame is painted, once however many
  // steps came in meanwhile (a held key, a drag). The timer stands in where no frame comes
  // (a hidden page).
  let settling: { frame: number; timer: ReturnType<typeof setTimeout> } | null = null;
  function settle() {
    if (settling) return;
    const run = () => {
      if (!settling) return;
      cancelAnimationFrame(settling.frame);
      clearTimeout(settling.timer);
      settling = null;
      recompute();
      pushDomains();
    };
    settling = { frame: requestAnimationFrame(() => { setTimeout(run); }), timer: setTimeout(run, 100) };
  }

  function pushDomains() {
    const domains: Record<string, Domain> = {};
    for (const { panel, fam, data } of panels) {
      if (fam.parameter === null) continue;
      const [lo, hi] = panel.range();
      domains[fam.name] = [encodeBound(data.grid[lo]), encodeBound(data.grid[hi])];
    }
    model.set("domains", domains);
    model.save_changes();
  }

  function applyDomains() {
    const domains = model.get("domains") ?? {};
    let moved = false;
    for (const { panel, fam, data } of panels) {
      const d = decodeDomain(domains[fam.name]);
      if (!d) continue;
      const g = data.grid;
      let lo = 0;
      while (lo < g.length - 1 && g[lo] < d[0]) lo++;
      let hi = g.length - 1;
      while (hi > 0 && g[hi] > d[1]) hi--;
      hi = Math.max(lo, hi);
      const [a, b] = panel.range();
      if (a === lo && b === hi) continue;  // the view's own change, come back: drawn already
      panel.setRange(lo, hi);
      moved = true;
    }
    if (moved || panels.some((p) => p.last === null)) recompute();
  }

  const selected = () => new Set(model.get("selected_sets") ?? []);

  function applySelection() {
    const chosen = selected();
    setBar.querySelectorAll("button").forEach((button) => {
      button.setAttribute("aria-pressed", String(chosen.has(button.dataset.set ?? "")));
    });
    panels.forEach(({ panel }) => panel.highlight(chosen));
  }

  function toggleSet(name: string) {
    const sets = model.get("spec").sets;
    const chosen = selected();
    if (chosen.has(name)) chosen.delete(name);
    else chosen.add(name);
    model.set("selected_sets", sets.filter((s) => chosen.has(s)));
    model.save_changes();
  }

  const buttonCleanups: (() => void)[] = [];
  function buildSetBar(sets: string[]) {
    buttonCleanups.splice(0).forEach((f) => f());
    setBar.replaceChildren();
    sets.forEach((name, k) => {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.set = name;
      button.style.borderColor = PALETTE[k % PALETTE.length];
      button.textContent = name;
      const toggle = () => toggleSet(name);
      button.addEventListener("click", toggle);
      buttonCleanups.push(() => button.removeEventListener("click", toggle));
      setBar.append(button);
    });
  }

  function build() {
    // The explanation opens inside the grid, below a clicked panel: back to the end first.
    if (explain.el.parentElement === grid) {
      root.append(explain.el);
      explain.el.classList.remove("dp-inline");
    }
    panels.forEach(({ panel }) => panel.destroy());
    const spec = model.get("spec");
    const buffer = model.get("curves");
    heading.textContent = `Diversity profiles — ${spec.condition}`;
    summaryHead.style.minHeight = "";
    const conditions = model.get("conditions") ?? [];
    chooser.replaceChildren(...conditions.map((c) => {
      const option = document.createElement("option");
      option.value = c;
      option.textContent = c;
      option.selected = c === spec.condition;
      return option;
    }));
    chooser.hidden = conditions.length < 2;
    buildSetBar(spec.sets);
    let waiting = spec.families.filter((f) => f.parameter !== null).length;
    loading.hidden = waiting === 0;
    const drawn = () => { if (--waiting <= 0) loading.hidden = true; };
    panels = spec.families.map((fam) => {
      const data = readFamily(buffer, fam, spec.sets.length);
      const panel = createPanel(fam, spec.sets, `${spec.representation} / ${spec.distance}`,
        data.grid, data.curves, settle,
        () => { panel.highlight(selected()); drawn(); }, toggleSet, (family, side) => {
          status.textContent = `asking Python for more ${family} points…`;
          model.set("extend_request", { family, side, nonce: Date.now() });
          model.save_changes();
        }, data.envelope, spec.permutation ?? null, spec.finding_level ?? 0.95);
      grid.append(panel.el);
      return { panel, fam, data, centred: centredOf(fam, data.curves, ruleContext(spec)),
        last: null };
    });
    applyDomains();
    applySelection();
    fillLastRow();
  }

  /** The grid's last row spans the whole width: its last panel takes the columns left
   *  empty (no ragged row of panels at the end). */
  function fillLastRow() {
    const items = panels.map(({ panel }) => panel.el);
    items.forEach((item) => { item.style.gridColumn = ""; });
    const columns = getComputedStyle(grid).gridTemplateColumns.split(" ").filter(Boolean).length;
    const left = columns > 1 ? items.length % columns : 0;
    if (left > 0) items[items.length - 1].style.gridColumn = `span ${columns - left + 1}`;
  }
  // The headline is never shorter while the domains move: the charts below stay under the
  // pointer. Its height is read after layout (reading offsetHeight on every step forced a
  // layout of the whole notebook on the input path).
  const headSize = new ResizeObserver(([entry]) => {
    const tallest = Math.max(parseFloat(summaryHead.style.minHeight) || 0, entry.contentRect.height);
    if (tallest > 0) summaryHead.style.minHeight = `${tallest}px`;
  });
  headSize.observe(summaryHead);
  const gridSize = new ResizeObserver(() => fillLastRow());
  gridSize.observe(grid);

  const unsubscribe = [
    bind(model, "spec", build),
    bind(model, "curves", build),
    bind(model, "domains", applyDomains),
    bind(model, "selected_sets", applySelection),
    bind(model, "status", showStatus),
  ];
  build();

  return () => {
    unsubscribe.forEach((off) => off());
    buttonCleanups.forEach((off) => off());
    chooser.removeEventListener("change", choose);
    root.removeEventListener("focusin", suppressShortcuts);
    gridSize.disconnect();
    headSize.disconnect();
    if (settling) {
      cancelAnimationFrame(settling.frame);
      clearTimeout(settling.timer);
      settling = null;
    }
    panels.forEach(({ panel }) => panel.destroy());
    explain.destroy();
    root.remove();
  };
}
