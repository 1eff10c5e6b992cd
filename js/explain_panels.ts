// "Why does it say that?": the panels drawn from what dp.explain and dp.convergence stored
// (the ``explanation`` trait; diversity_profiles.explain_view writes it). Clicking a point
// of a profile (panel.ts sends a "dp-point" event) or a dominance-matrix cell opens the
// witnesses of that family for the highlighted sets; a distance panel shows the pooled
// histogram with each family's domain on the distance axis and where the sliders sit; a
// category panel lists categories by diversity; a convergence view plots value against n.
//
// Every number is read from the payload: the only arithmetic here is drawing (1/t puts a
// reciprocal slider's domain on the distance axis, as the payload's mapping says; ± sd bars).
// Family facts (titles, symbols, parameter names, which panel shows a family's witnesses)
// come from Python: ``witness_kinds`` in the payload, ``spec.families`` for the rest.
// Sample texts, labels and category names are untrusted: they are written with
// textContent only, and images are shown only as <img src="data:...">.
import embed, { type VisualizationSpec } from "vega-embed";
import type { View } from "vega";
import { PALETTE } from "./constants";
import { readFamily, type Model } from "./model";
import type {
  Explanation, ExplainSample, ExplorerSpec, SetCategories, SetWitnesses, WitnessKind,
} from "./traits";
import { decodeDomain } from "./domains";
import { CHART_CONFIG, TOOLTIP_OPTIONS } from "./theme";

const TABS = [["witnesses", "Witnesses"], ["distances", "Distances"],
  ["categories", "Categories"], ["convergence", "Convergence"]] as const;
type Tab = typeof TABS[number][0];

export const EXPLAIN_STYLE = `
.dp-explain { border: 1px solid var(--dp-border); border-radius: 6px; padding: 8px; margin-top: 10px; }
.dp-explain.dp-inline { margin-top: 0; flex: 1 1 100%; grid-column: 1 / -1; }
.dp-explain:focus { outline: none; }
.dp-explain:focus-visible { outline: 2px solid var(--dp-focus); }
.dp-explain .dp-where { color: var(--dp-fg); font-weight: 600; }
.dp-explain [role=tablist] button { border-radius: 4px 4px 0 0; margin-right: 2px; }
.dp-explain [role=tablist] button[aria-selected="true"] { background: var(--dp-pressed); font-weight: bold; }
.dp-explain .dp-note { color: var(--dp-muted); margin: 4px 0; }
.dp-explain .dp-controls { margin: 4px 0; display: flex; gap: 6px; }
.dp-explain .dp-chart { display: block; }
.dp-explain .dp-witness { margin: 6px 0 10px; }
.dp-explain .dp-witness h5 { margin: 4px 0; font-size: 13px; }
.dp-explain ol.dp-samples { display: flex; flex-wrap: wrap; gap: 6px; list-style: none; padding: 0; margin: 2px 0; }
.dp-explain ol.dp-samples li { border: 1px solid var(--dp-border); border-radius: 4px; padding: 3px 5px; max-width: 260px; }
.dp-explain ol.dp-samples img { display: block; image-rendering: pixelated; max-height: 96px; }
.dp-explain ol.dp-samples .dp-text { white-space: pre-wrap; overflow-wrap: anywhere; }
.dp-explain ol.dp-samples .dp-value { color: var(--dp-link); font-variant-numeric: tabular-nums; }
.dp-explain table { border-collapse: collapse; }
.dp-explain table td, .dp-explain table th { padding: 1px 8px; text-align: right; }
.dp-explain table td:first-child, .dp-explain table th:first-child { text-align: left; }
`;

const fmt = (x: number | null | undefined, digits = 3) =>
  x === null || x === undefined || !Number.isFinite(x) ? "—" : Number(x.toPrecision(digits)).toString();
const pct = (x: number | null) => (x === null ? "—" : `${Number((x * 100).toPrecision(3))}%`);

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

/** Where a pointer event falls in a Vega-Lite view's plot, in pixels from the plot's
 *  top left (null when it cannot be read). The SVG's root group is the plot's coordinate
 *  system: its screen matrix maps back. */
export function plotPoint(view: View, event: Event): [number, number] | null {
  const root = view.container()?.querySelector("svg > g") as SVGGraphicsElement | null;
  const ctm = root?.getScreenCTM();
  if (!ctm || !(event instanceof MouseEvent)) return null;
  return [(event.clientX - ctm.e) / ctm.a, (event.clientY - ctm.f) / ctm.d];
}

/** The x of a click in data units of a Vega-Lite view's x scale (null off the scale). */
export function dataX(view: View, event: Event): number | null {
  const scale = view.scale("x") as ((x: number) => number) & { invert?: (px: number) => number };
  const at = plotPoint(view, event);
  if (!scale?.invert || !at) return null;
  const x = scale.invert(at[0]);
  return Number.isFinite(x) ? x : null;
}

/** What a "dp-point" event carries (panel.ts dispatches it on a chart click). */
export interface PointDetail { family: string; set: string | null; x: number | null }

export interface ExplainPanels {
  el: HTMLElement;
  /** Open the witnesses of ``family`` at parameter ``x`` for ``sets`` (all if empty). */
  show(family: string, x: number | null, sets: string[]): void;
  destroy(): void;
}

function sampleItem(s: ExplainSample | undefined, i: number, value: string, title: string) {
  const li = el("li");
  li.dataset.index = String(i);
  if (s?.image) {
    const img = el("img");
    img.src = s.image; // a data: URL (checked in Python); an <img> runs no script
    img.alt = s.text ? s.text : `sample ${i}`;
    img.width = 48;
    li.append(img);
  }
  const text = s?.text ? s.text : "";
  li.append(el("span", `#${i}${text ? " " : ""}`, "dp-index"));
  if (text) li.append(el("span", text + (s?.truncated ? "" : ""), "dp-text"));
  if (value) {
    li.append(document.createElement("br"));
    li.append(el("span", value, "dp-value"));
  }
  const extra = [title];
  if (s?.category !== null && s?.category !== undefined) extra.push(`category ${s.category}`);
  if (s?.group !== null && s?.group !== undefined) extra.push(`near-duplicate group ${s.group}`);
  li.title = extra.filter(Boolean).join("; ");
  return li;
}

/** The same grid point (values sent through JSON keep their digits; 1e-9 allows rounding). */
const samePoint = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(b), 1e-300);

function witnessBlock(w: SetWitnesses, family: string, info: WitnessKind | undefined,
  nearestFamily: string, k: number): HTMLElement {
  const box = el("div", undefined, "dp-witness");
  box.dataset.set = w.set;
  box.dataset.family = family;
  const head = el("h5", w.set);
  head.style.borderLeft = `4px solid ${PALETTE[k % PALETTE.length]}`;
  head.style.paddingLeft = "4px";
  box.append(head);
  const byIndex = new Map(w.samples.map((s) => [s.i, s]));
  const list = (rows: { i: number; value: string; title?: string }[], label: string) => {
    const ol = el("ol", undefined, "dp-samples");
    ol.setAttribute("aria-label", `${label} of ${w.set}`);
    ol.dataset.role = label;
    rows.forEach((r) => ol.append(sampleItem(byIndex.get(r.i), r.i, r.value, r.title ?? "")));
    box.append(ol);
  };
  const note = (text: string) => box.append(el("p", text, "dp-note"));
  const witness = w.witnesses[family];
  const symbol = info?.symbol ?? "";
  if (witness?.kind === "weights") {
    const m = witness;
    note(`Weighting w = Z_${symbol}⁻¹1 at ${symbol} = ${fmt(m.at)} (exact solve): Σw = ${fmt(m.total, 4)}` +
      (m.stored === null ? "" : ` = the profile's ${family} ${fmt(m.stored, 4)}`) +
      `. Largest weights carry the effective size; ${m.n_negative} of ${w.n} are negative.`);
    list(m.top.map((r) => ({ i: r.i, value: `w = ${fmt(r.weight)}` })), "largest weights");
    if (m.negative.length) {
      note("Most negative weights (samples shadowed by others):");
      list(m.negative.map((r) => ({ i: r.i, value: `w = ${fmt(r.weight)}` })), "negative weights");
    }
  } else if (witness?.kind === "packing") {
    const c = witness;
    const how = c.method === "exact" ? "exact: a proved maximum packing"
      : "greedy: a valid packing, the profile's lower bound";
    const bounds = c.stored_lower === null ? "" : c.stored_lower === c.stored_upper
      ? ` (the profile's value ${c.stored_lower})` : ` (the profile's bounds ${c.stored_lower}–${c.stored_upper})`;
    note(`${c.size} samples pairwise farther apart than ${symbol} = ${fmt(c.at)} (${how})${bounds}.` +
      (c.members.length < c.size ? ` The first ${c.members.length} are listed.` : ""));
    list(c.members.map((i) => ({ i, value: "" })), "packing");
  } else if (witness?.kind === "modes") {
    const v = witness;
    note(`Leading modes of K/n (exact eigendecomposition; the same at every q). Shannon ` +
      `entropy of the spectrum H = ${fmt(v.entropy, 4)} = log Vendi(q = 1).`);
    v.modes.forEach((mode, m) => {
      note(`Mode ${m + 1}: ${pct(mode.share)} of the spectrum — samples with the largest loadings:`);
      list(mode.samples.map((r) => ({ i: r.i, value: `loading ${fmt(r.loading)}` })), `mode ${m + 1}`);
    });
    note("Largest shares of the entropy (c_i = Σ_k λ_k(−log λ_k)u_ik²; they sum to H):");
    list(v.top_contribution.map((r) => ({ i: r.i, value: `c = ${fmt(r.contribution)}` })),
      "entropy contributions");
  } else {
    const owner = info?.kind === "nearest" ? family : nearestFamily;
    note(`${w.groups ?? "?"} near-duplicate groups (${owner}'s classes) among ${w.n} samples. ` +
      "The samples closest to another one, with that neighbour:");
    list(w.nearest.flatMap((r) => [{ i: r.i, value: `→ #${r.j} at ${fmt(r.distance)}` }]),
      "nearest samples");
  }
  return box;
}

function barsSpec(ex: Explanation, spec: ExplorerSpec, domains: object[]): VisualizationSpec {
  const d = ex.distances!;
  const bars = d.bin_lower.map((lo, b) => ({ lo, hi: d.bin_upper[b], count: d.pooled_count[b] }));
  const perSet = d.count.flatMap((row, k) => row.map((count, b) => ({
    set: spec.sets[k], x: ((d.bin_lower[b] ?? 0) + (d.bin_upper[b] ?? 0)) / 2, count,
  })));
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...CHART_CONFIG,
    title: { text: "Pairwise distances", subtitle: "pooled (bars), per set (lines); domains shaded" },
    width: 360, height: 150,
    datasets: { bars, perSet, domains },
    layer: [
      { data: { name: "domains" }, mark: { type: "rect", opacity: 0.12 },
        encoding: { x: { field: "lo", type: "quantitative" }, x2: { field: "hi" },
          color: { field: "family", type: "nominal", legend: { orient: "bottom", title: "domain" } },
          tooltip: [{ field: "family" }, { field: "what" }, { field: "lo", title: "from" },
            { field: "hi", title: "to" }] } },
      { data: { name: "bars" }, mark: { type: "rect", color: "#999" },
        encoding: { x: { field: "lo", type: "quantitative", title: `distance (${spec.distance})` },
          x2: { field: "hi" }, y: { field: "count", type: "quantitative", title: "pairs" },
          tooltip: [{ field: "lo", title: "from" }, { field: "hi", title: "to" }, { field: "count" }] } },
      { data: { name: "perSet" }, mark: { type: "line", interpolate: "step" },
        encoding: { x: { field: "x", type: "quantitative" }, y: { field: "count", type: "quantitative" },
          stroke: { field: "set", type: "nominal", scale: { domain: spec.sets, range: PALETTE },
            legend: { orient: "bottom", title: "set" } } } },
    ],
  } as VisualizationSpec;
}

function convergenceSpec(rows: object[], sets: string[], title: string): VisualizationSpec {
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    ...CHART_CONFIG,
    title: { text: title, subtitle: "mean ± sd over repeats, nested subsamples" },
    width: 320, height: 150,
    data: { values: rows },
    encoding: {
      x: { field: "n", type: "quantitative", scale: { type: "log" }, title: "samples n" },
      color: { field: "set", type: "nominal", scale: { domain: sets, range: PALETTE },
        legend: { orient: "bottom" } },
    },
    layer: [
      { mark: { type: "line", point: true },
        encoding: { y: { field: "mean", type: "quantitative", scale: { zero: false }, title },
          tooltip: [{ field: "set" }, { field: "n" }, { field: "mean" }, { field: "sd" }] } },
      { mark: { type: "rule" }, encoding: { y: { field: "lo", type: "quantitative" }, y2: { field: "hi" } } },
    ],
  } as VisualizationSpec;
}

/** The panels, under ``root``: listens there for chart clicks and matrix-cell clicks. */
export function createExplainPanels(model: Model, root: HTMLElement): ExplainPanels {
  // A region, not a <section>: the family panels are the explorer's sections.
  const box = el("div", undefined, "dp-explain");
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", "why does it say that");
  box.tabIndex = -1; // focused when a click opens it
  const title = el("h4", "Why does it say that?");
  const tabs = el("div");
  tabs.setAttribute("role", "tablist");
  const bodies = new Map<Tab, HTMLElement>();
  const buttons = new Map<Tab, HTMLButtonElement>();
  const cleanups: (() => void)[] = [];
  const listen = (target: EventTarget, type: string, f: EventListener) => {
    target.addEventListener(type, f);
    cleanups.push(() => target.removeEventListener(type, f));
  };
  for (const [key, label] of TABS) {
    const button = el("button", label);
    button.type = "button";
    button.id = `dp-tab-${key}-${Math.random().toString(36).slice(2, 8)}`;
    button.setAttribute("role", "tab");
    button.dataset.tab = key;
    const body = el("div");
    body.setAttribute("role", "tabpanel");
    body.dataset.tab = key;
    body.setAttribute("aria-labelledby", button.id);
    listen(button, "click", () => select(key));
    tabs.append(button);
    buttons.set(key, button);
    bodies.set(key, body);
  }
  box.append(title, tabs, ...bodies.values());

  const views = new Map<Tab, View[]>();
  let distView: View | null = null;
  const release = (tab: Tab) => {
    (views.get(tab) ?? []).forEach((v) => v.finalize());
    views.set(tab, []);
    if (tab === "distances") distView = null;
  };
  let current: { family: string; x: number | null; sets: string[] } = { family: "", x: null, sets: [] };
  let convChoice = { family: "", index: -1 };
  let destroyed = false;

  /** A family's facts as Python sent them (spec.families), and its parameter's symbol. */
  const familyOf = (name: string) => model.get("spec").families.find((f) => f.name === name);
  const symbolOf = (name: string, fallback: string) => familyOf(name)?.symbol || fallback;

  const explanation = (): Explanation | null => {
    const ex = model.get("explanation");
    return ex && "version" in ex ? ex as Explanation : null;
  };

  function select(tab: Tab) {
    for (const [key, button] of buttons) {
      button.setAttribute("aria-selected", String(key === tab));
      button.tabIndex = key === tab ? 0 : -1;
      bodies.get(key)!.hidden = key !== tab;
    }
  }

  function draw(tab: Tab, spec: VisualizationSpec, target: HTMLElement = bodies.get(tab)!) {
    // Views whose chart was replaced are released here (their element is gone).
    views.set(tab, (views.get(tab) ?? []).filter((v) => {
      if (v.container()?.isConnected) return true;
      v.finalize();
      return false;
    }));
    const chart = el("div", undefined, "dp-chart");
    target.append(chart);
    embed(chart, spec, { actions: false, renderer: "svg", logLevel: 1,
      tooltip: TOOLTIP_OPTIONS }).then((result) => {
      if (destroyed || !chart.isConnected) {
        result.view.finalize(); // redrawn or cleaned up while Vega compiled
        return;
      }
      views.set(tab, [...(views.get(tab) ?? []), result.view]);
      if (tab === "distances") distView = result.view;
    });
  }

  function drawWitnesses(ex: Explanation) {
    const body = bodies.get("witnesses")!;
    const active = document.activeElement;
    const focused = active && body.contains(active) ? active.getAttribute("aria-label") : null;
    body.replaceChildren();
    const kinds = ex.witness_kinds;
    const available = Object.keys(kinds).filter((f) => kinds[f].kind === "nearest"
      || ex.sets.some((w) => w.witnesses[f] !== undefined));
    const nearest = Object.keys(kinds).find((f) => kinds[f].kind === "nearest") ?? "";
    if (!ex.sets.length) {
      body.append(el("p", "No witnesses stored: run dp.explain(tree, sets) to store them.", "dp-note"));
      return;
    }
    const family = available.includes(current.family) ? current.family
      : kinds[current.family] === undefined && current.family ? nearest : available[0];
    const chooser = el("select");
    chooser.setAttribute("aria-label", "witnesses of family");
    available.forEach((f) => {
      const option = el("option", kinds[f].title);
      option.value = f;
      option.selected = f === family;
      chooser.append(option);
    });
    chooser.addEventListener("change", () => {
      current = { ...current, family: chooser.value, x: null };
      drawWitnesses(ex);
    });
    const controls = el("div", undefined, "dp-controls");
    controls.append(chooser);
    body.append(controls);
    // The parameter from the keyboard too: the same as clicking that grid point.
    const info: WitnessKind | undefined = kinds[family];
    const grid = info?.swept ? gridOf(family) : null;
    const first = ex.sets[0]?.witnesses[family];
    const stored = first && "at" in first ? first.at : undefined;
    if (grid && stored !== undefined) {
      const symbol = info.symbol;
      const shown = current.family === family && current.x !== null ? current.x : stored;
      const at = el("select");
      at.setAttribute("aria-label", `${symbol} of the ${family} witnesses`);
      grid.forEach((g) => {
        if (!Number.isFinite(g)) return;
        const option = el("option", `${symbol} = ${fmt(g)}${g === stored ? " (stored)" : ""}`);
        option.value = String(g);
        option.selected = g === shown;
        at.append(option);
      });
      at.addEventListener("change", () => {
        current = { ...current, family, x: Number(at.value) };
        drawWitnesses(ex);
        askPython();
      });
      controls.append(at);
    }
    if (current.family && current.family !== family) {
      body.append(el("p", `No witness is stored for ${current.family}; showing ${kinds[family]?.title}.`,
        "dp-note"));
    }
    // Where the shown witnesses stand against the clicked (or chosen) point, said plainly.
    const asked = current.family === family ? current.x : null;
    if (grid && stored !== undefined) body.append(whereNote(ex, family, info, asked));
    const wanted = current.sets.length ? ex.sets.filter((w) => current.sets.includes(w.set)) : ex.sets;
    (wanted.length ? wanted : ex.sets).forEach((w) => {
      body.append(witnessBlock(w, family, info, nearest, w.index));
    });
    if (focused) {  // the redraw replaced the focused control: focus its successor
      [...body.querySelectorAll<HTMLElement>("select")]
        .find((c) => c.getAttribute("aria-label") === focused)?.focus({ preventScroll: true });
    }
  }

  /** "Witnesses at τ = X", or "No explanation stored at τ = X; nearest stored: τ = Y". */
  function whereNote(ex: Explanation, family: string, info: WitnessKind, asked: number | null) {
    const symbol = info.symbol;
    const ats = ex.sets.map((w) => w.witnesses[family]).filter((w) => w && "at" in w)
      .map((w) => (w as { at: number }).at);
    const note = el("p", undefined, "dp-note dp-where");
    note.setAttribute("role", "status");
    const all = current.sets.length === 0 ? ", for every set" : "";
    if (asked === null) {
      note.textContent = `Witnesses stored at ${symbol} = ${ats.map((a) => fmt(a))
        .filter((t, k, xs) => xs.indexOf(t) === k).join(", ")}${all}.`;
      return note;
    }
    if (ats.every((a) => samePoint(asked, a))) {
      note.textContent = `Witnesses at ${symbol} = ${fmt(asked)}, the point you chose${all}.`;
      return note;
    }
    const dist = (a: number) => Math.abs(a - asked);
    const near = ats.reduce((best, a) => (dist(a) < dist(best) ? a : best), ats[0]);
    note.textContent = `No explanation stored at ${symbol} = ${fmt(asked)}; nearest stored: ` +
      `${symbol} = ${fmt(near)} (shown below).`;
    const more = el("span", undefined, "dp-asking");
    more.textContent = model.live === false
      ? ` For witnesses there run dp.explain(tree, sets, ${info.parameter}=${Number(asked.toPrecision(6))}).`
      : ` Asking Python for the witnesses at ${symbol} = ${fmt(asked)}…`;
    note.append(more);
    return note;
  }

  function domainRows(ex: Explanation): object[] {
    const d = ex.distances!;
    const chosen = model.get("domains") ?? {};
    const rows: object[] = [];
    for (const dom of d.domains) {
      const slider = decodeDomain(chosen[dom.family]);
      let lo = dom.lower;
      let hi = dom.upper;
      let what = `full grid (${dom.mapping})`;
      const symbol = symbolOf(dom.family, "");
      if (slider && dom.slider === "direct") [lo, hi, what] = [slider[0], slider[1], `slider (${symbol})`];
      else if (slider && dom.slider === "inverse") {
        [lo, hi, what] = [1 / slider[1], 1 / slider[0], `slider (1/${symbol})`];
      }
      if (lo === null || hi === null) continue;
      const span = hi > lo ? [lo, hi] : [lo * 0.995, hi * 1.005]; // a bandwidth: a thin band
      rows.push({ family: dom.family, lo: span[0], hi: span[1], what });
    }
    return rows;
  }

  function drawDistances(ex: Explanation) {
    const body = bodies.get("distances")!;
    release("distances");
    body.replaceChildren();
    const d = ex.distances;
    if (!d) {
      body.append(el("p", "No distance histogram stored: run dp.explain(tree, sets).", "dp-note"));
      return;
    }
    const spec = model.get("spec");
    draw("distances", barsSpec(ex, spec, domainRows(ex)));
    const table = el("table");
    table.setAttribute("aria-label", "distance concentration");
    const head = table.insertRow();
    ["", "relative contrast (max−min)/min", "coefficient of variation", "min > 0", "mean", "max"]
      .forEach((h) => head.append(el("th", h)));
    const row = (name: string, c: typeof d.pooled) => {
      const tr = table.insertRow();
      tr.append(el("td", name));
      [c.relative_contrast, c.coefficient_of_variation, c.min_positive_distance, c.mean_distance,
        c.max_distance].forEach((v) => tr.append(el("td", fmt(v))));
    };
    row("pooled", d.pooled);
    d.per_set.forEach((c, k) => row(spec.sets[k] ?? `set ${k}`, c));
    body.append(table);
    body.append(el("p", "Exact, over every pair of samples. Near-zero contrast means the distances " +
      "concentrate: a scale parameter then separates all samples or none. Domains: " +
      d.domains.map((x) => `${x.family} (${x.mapping})`).join(", ") + ".", "dp-note"));
  }

  function categoryTable(c: SetCategories): HTMLElement {
    const wrap = el("div", undefined, "dp-witness");
    wrap.dataset.set = c.set;
    wrap.append(el("h5", c.set));
    const order = el("select");
    order.setAttribute("aria-label", `order q of the partition of ${c.set}`);
    c.orders.forEach((q, k) => {
      const option = el("option", `q = ${q}`);
      option.value = String(k);
      option.selected = q === "1";
      order.append(option);
    });
    const table = el("table");
    table.setAttribute("aria-label", `categories of ${c.set}`);
    const fill = () => {
      const k = Number(order.value);
      table.replaceChildren();
      const scalars = Object.keys(c.scalar);
      const head = table.insertRow();
      ["category", "n", "ᾱ (within)", "β̄ (distinct)", "γ (contribution)", ...scalars]
        .forEach((h) => head.append(el("th", h)));
      const alpha = c.partition.alpha?.[k] ?? [];
      const rows = c.categories.map((name, j) => ({ name, j, a: alpha[j] ?? null }));
      rows.sort((x, y) => (y.a ?? -Infinity) - (x.a ?? -Infinity)); // by diversity
      for (const r of rows) {
        const tr = table.insertRow();
        tr.dataset.category = r.name;
        tr.append(el("td", r.name), el("td", String(c.size[r.j])), el("td", fmt(r.a)),
          el("td", fmt(c.partition.beta?.[k]?.[r.j])), el("td", fmt(c.partition.gamma?.[k]?.[r.j])));
        scalars.forEach((f) => tr.append(el("td", fmt(c.scalar[f][r.j]))));
      }
      const foot = table.insertRow();
      foot.append(el("td", "whole set"), el("td", String(c.size.reduce((a, b) => a + b, 0))),
        el("td", fmt(c.meta.alpha[k])), el("td", fmt(c.meta.beta[k])), el("td", fmt(c.meta.gamma[k])));
    };
    order.addEventListener("change", fill);
    fill();
    wrap.append(order, table, el("p", `Reeve et al. (2016) partition, similarity: ${c.similarity}. ` +
      "Whole-set row: Ā, B̄, G (G is the Leinster–Cobbold diversity of the set).", "dp-note"));
    if (c.swept.length) {
      // Each category's profile of one family, on demand (the values explain computed).
      const curves = el("select");
      curves.setAttribute("aria-label", `curves per category of ${c.set}`);
      curves.append(el("option", "curves per category…"));
      c.swept.forEach((f, k) => {
        const option = el("option", f.family);
        option.value = String(k);
        curves.append(option);
      });
      const holder = el("div");
      curves.addEventListener("change", () => {
        holder.replaceChildren();
        const f = c.swept[Number(curves.value)];
        if (!f) return;
        const log = model.get("spec").families.find((x) => x.name === f.family)?.axis === "log";
        const rows = c.categories.flatMap((category, j) => f.grid.map((x, i) => ({
          category, x, value: f.values[j]?.[i] ?? null,
        }))).filter((r) => r.x !== null && r.value !== null && (!log || r.x > 0));
        draw("categories", {
          $schema: "https://vega.github.io/schema/vega-lite/v6.json",
          ...CHART_CONFIG,
          title: { text: `${f.family} per category`, subtitle: c.set },
          width: 320, height: 150, data: { values: rows },
          mark: { type: "line", interpolate: familyOf(f.family)?.step ? "step-after" : "linear" },
          encoding: {
            x: { field: "x", type: "quantitative", title: symbolOf(f.family, f.parameter),
              scale: log ? { type: "log" } : { zero: false } },
            y: { field: "value", type: "quantitative", title: f.family },
            color: { field: "category", type: "nominal", legend: { orient: "bottom" } },
            tooltip: [{ field: "category" }, { field: "x" }, { field: "value" }],
          },
        } as VisualizationSpec, holder);
      });
      wrap.append(curves, holder);
    }
    return wrap;
  }

  function drawCategories(ex: Explanation) {
    const body = bodies.get("categories")!;
    body.replaceChildren();
    if (!ex.categories.length) {
      body.append(el("p", "No categories stored: pass categories= to dp.explain.", "dp-note"));
      return;
    }
    ex.categories.forEach((c) => body.append(categoryTable(c)));
  }

  function drawConvergence(ex: Explanation) {
    const body = bodies.get("convergence")!;
    release("convergence");
    body.replaceChildren();
    const conv = ex.convergence;
    if (!conv || !conv.families.length) {
      body.append(el("p", "No convergence stored: tree[C + '/convergence'] = " +
        "xr.DataTree(dp.convergence(sets, sizes=[...], like=tree)).", "dp-note"));
      return;
    }
    const fam = conv.families.find((f) => f.family === convChoice.family)
      ?? conv.families.find((f) => f.family === current.family) ?? conv.families[0];
    const famSelect = el("select");
    famSelect.setAttribute("aria-label", "convergence of family");
    conv.families.forEach((f) => {
      const option = el("option", f.family);
      option.selected = f === fam;
      famSelect.append(option);
    });
    famSelect.addEventListener("change", () => {
      convChoice = { family: famSelect.value, index: -1 };
      drawConvergence(ex);
    });
    const controls = el("div", undefined, "dp-controls");
    controls.append(famSelect);
    body.append(controls);
    let index = 0;
    if (fam.parameter !== null) {
      // The grid point nearest the clicked parameter (a lookup: values are the core's).
      const target = convChoice.family === fam.family && convChoice.index >= 0 ? null
        : current.family === fam.family ? current.x : null;
      index = convChoice.family === fam.family && convChoice.index >= 0 ? convChoice.index
        : Math.floor(fam.grid.length / 2);
      if (target !== null) {
        let best = Infinity;
        fam.grid.forEach((g, k) => {
          const gap = g === null ? Infinity : Math.abs(Math.log(Math.max(g, 1e-300)) - Math.log(Math.max(target, 1e-300)));
          if (gap < best) [best, index] = [gap, k];
        });
      }
      const at = el("select");
      at.setAttribute("aria-label", `${fam.parameter} of the convergence view`);
      fam.grid.forEach((g, k) => {
        const option = el("option", `${symbolOf(fam.family, fam.parameter!)} = ${g === null ? "∞" : fmt(g)}`);
        option.value = String(k);
        option.selected = k === index;
        at.append(option);
      });
      at.addEventListener("change", () => {
        convChoice = { family: fam.family, index: Number(at.value) };
        drawConvergence(ex);
      });
      controls.append(at);
    }
    const rows: object[] = [];
    conv.sets.forEach((set, k) => conv.sizes.forEach((n, j) => {
      const mean = fam.mean[k]?.[j]?.[index];
      const sd = fam.sd[k]?.[j]?.[index] ?? 0;
      if (mean === null || mean === undefined) return;
      rows.push({ set, n, mean, sd, lo: mean - (sd ?? 0), hi: mean + (sd ?? 0) });
    }));
    const label = fam.parameter === null ? fam.family
      : `${fam.family} at ${symbolOf(fam.family, fam.parameter)} = ${fmt(fam.grid[index])}`;
    draw("convergence", convergenceSpec(rows, conv.sets, label));
    body.append(el("p", `${conv.repeats} repeats per size (${conv.subsampling}); ${fam.estimate}.`, "dp-note"));
  }

  function redraw() {
    const ex = explanation();
    box.hidden = ex === null;
    if (!ex) return;
    drawWitnesses(ex);
    drawDistances(ex);
    drawCategories(ex);
    drawConvergence(ex);
  }

  /** With a kernel, ask Python for the witnesses at the clicked grid point (it answers
   *  with a new ``explanation``, or says in ``status`` why it cannot). */
  const askPython = () => {
    const ex = explanation();
    const family = current.family;
    if (model.live === false || !ex || current.x === null) return;
    if (!ex.witness_kinds[family]?.swept) return;
    const stored = ex.sets[0]?.witnesses[family];
    const at = stored && "at" in stored ? stored.at : null;
    if (at === null || at === current.x) return;
    model.set("explain_request", { family, value: current.x, nonce: Date.now() });
    model.save_changes();
  };
  const gridOf = (family: string): Float64Array | null => {
    const spec = model.get("spec");
    const fam = spec.families.find((f) => f.name === family);
    return !fam || fam.parameter === null ? null
      : readFamily(model.get("curves"), fam, spec.sets.length).grid;
  };
  /** The family's grid point nearest a click (log distance on log axes): a lookup. */
  const nearestGridPoint = (family: string, x: number | null): number | null => {
    const fam = model.get("spec").families.find((f) => f.name === family);
    const grid = gridOf(family);
    if (x === null || !fam || !grid) return x;
    const gap = (g: number) => (fam.axis === "log"
      ? (g > 0 && x > 0 ? Math.abs(Math.log(g / x)) : Infinity) : Math.abs(g - x));
    let best = x;
    let bestGap = Infinity;
    grid.forEach((g) => {
      if (Number.isFinite(g) && gap(g) < bestGap) [best, bestGap] = [g, gap(g)];
    });
    return best;
  };
  /** Open the panel right below the clicked family's panel (a full row of the grid),
   *  scrolled into view and focused, so that the answer appears where the question was. */
  const place = (section: Element | null) => {
    if (!section?.parentElement) return;
    if (section.nextElementSibling !== box) section.after(box);
    box.classList.add("dp-inline");
    box.scrollIntoView({ block: "nearest" });
    box.focus({ preventScroll: true });
  };
  const onPoint = (event: Event) => {
    const detail = (event as CustomEvent<PointDetail>).detail;
    if (!explanation()) return;
    // Every set's witnesses: the click also highlights the clicked set, but the point
    // clicked is a parameter value, and the explanation there concerns all of them.
    current = { family: detail.family, x: nearestGridPoint(detail.family, detail.x), sets: [] };
    convChoice = { family: "", index: -1 };
    redraw();
    select("witnesses");
    place((event.target as Element | null)?.closest?.("section[data-family]") ?? null);
    askPython();
  };
  // A dominance-matrix cell: the witnesses of that family for its row and column sets.
  const onCell = (event: Event) => {
    const cell = (event.target as Element | null)?.closest?.("td[data-verdict]");
    const section = cell?.closest("section[data-family]") as HTMLElement | null;
    if (!cell || !section || !explanation()) return;
    const sets = model.get("spec").sets;
    const row = (cell.parentElement as HTMLTableRowElement).rowIndex - 1;
    const col = (cell as HTMLTableCellElement).cellIndex - 1;
    current = { family: section.dataset.family ?? "", x: null,
      sets: [sets[row], sets[col]].filter((s) => s !== undefined) };
    redraw();
    select("witnesses");
    place(section);
  };
  listen(root, "dp-point", onPoint);
  listen(root, "click", onCell);
  const onDomains = () => {
    const ex = explanation();
    if (!ex?.distances) return;
    if (distView) distView.data("domains", domainRows(ex)).runAsync();
    else drawDistances(ex);
  };
  const onExplanation = () => redraw(); // the witnesses asked for, or another condition
  // Python's answer to a request it could not meet (no profiler, say) goes by the note.
  const onStatus = () => {
    const said = model.get("status");
    const asking = box.querySelector(".dp-asking");
    if (said && asking) asking.textContent = ` ${said}`;
  };
  model.on("change:status", onStatus);
  cleanups.push(() => model.off("change:status", onStatus));
  model.on("change:domains", onDomains);
  model.on("change:explanation", onExplanation);
  cleanups.push(() => model.off("change:domains", onDomains),
    () => model.off("change:explanation", onExplanation));
  select("witnesses");
  redraw();

  return {
    el: box,
    show(family: string, x: number | null, sets: string[]) {
      current = { family, x, sets };
      redraw();
      select("witnesses");
    },
    destroy() {
      destroyed = true;
      cleanups.forEach((f) => f());
      TABS.forEach(([tab]) => release(tab));
      box.remove();
    },
  };
}
