// Rendering the explorer with a fake model: drawn charts, text-only labels, no leaks.
import { describe, expect, it } from "vitest";
import widget from "../widget";
import type { ExplorerSpec, Model, Traits } from "../model";

const XSS = "<img src=x onerror=alert(1)>";

function fakeModel(): Model & { listeners: () => number } {
  // Two sets on one log-axis family: A = t, B = 1/t, crossing at t = 1.
  const t = Array.from({ length: 9 }, (_, k) => 10 ** (k / 4 - 1));
  const floats = Float64Array.from([...t, ...t, ...t.map((x) => 1 / x)]);
  const spec: ExplorerSpec = {
    condition: "r/d", representation: "r", distance: "d", sets: ["A", XSS],
    families: [{ name: "magnitude", parameter: "t", axis: "log", step: false,
      long_name: "magnitude", integer: false, symbol: "t", axis_title: "scale t",
      extendable: false, band: null, n: 9, grid: 0, values: 9, lower: null, upper: null }],
  };
  const state: Traits = { spec, curves: new DataView(floats.buffer), domains: {},
    selected_sets: [], condition: "r/d", conditions: ["r/d"],
    extend_request: { family: "", side: "high", nonce: 0 }, status: "", explanation: {},
    explain_request: {} };
  const handlers = new Map<string, Set<() => void>>();
  return {
    get: (key) => state[key],
    set: (key, value) => { state[key] = value; handlers.get(`change:${key}`)?.forEach((f) => f()); },
    save_changes: () => {},
    on: (event, f) => { handlers.set(event, (handlers.get(event) ?? new Set()).add(f)); },
    off: (event, f) => { handlers.get(event)?.delete(f); },
    listeners: () => [...handlers.values()].reduce((n, s) => n + s.size, 0),
  };
}

describe("explorer", () => {
  it("draws the curves, shows the crossing verdict and keeps labels as text", async () => {
    const model = fakeModel();
    const el = document.createElement("div");
    document.body.append(el);
    const cleanup = widget.render({ model, el });
    await expect.poll(() => el.querySelectorAll("svg .mark-line path").length).toBe(2);
    const cell = el.querySelector("table tr:nth-child(2) td:nth-child(3)") as HTMLElement;
    // No replicates: the cell says no finding first, these samples' crossing after it.
    expect(cell.dataset.verdict).toBe("no uncertainty");
    expect(cell.textContent).toBe("–");
    expect(cell.dataset.point).toBe("crosses");
    expect(cell.title).toContain("these samples: they cross at t ≈ 1");
    expect(cell.getAttribute("aria-label")).toBe(cell.title);
    expect(cell.tabIndex).toBe(0); // the matrix's one cell in the tab order
    expect(el.querySelector(".dp-legend")?.textContent).toMatch(/^≻ row ahead/);
    expect(el.querySelector(".dp-matrix caption")?.textContent).toMatch(/row's set against the column's/);
    expect(el.querySelector(".dp-summary")?.textContent)
      .toMatch(/^\*\*No verdict is supported\*\*: these profiles carry no sampling uncertainty/);
    expect(el.textContent).toContain(XSS);
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector(".dp-summary")?.textContent).toContain("cross in magnitude at t ≈ 1");
    cleanup();
    expect(model.listeners()).toBe(0);
    expect(el.children.length).toBe(0);
  });

  it("narrows the domain from the model and recomputes the verdict", async () => {
    const model = fakeModel();
    const el = document.createElement("div");
    const cleanup = widget.render({ model, el });
    model.set("domains", { magnitude: [1.5, 10] });
    const cell = el.querySelector("table tr:nth-child(2) td:nth-child(3)") as HTMLElement;
    expect(cell.dataset.point).toBe("dominates");
    cleanup();
  });

  it("reads findings from multiplier draws with no subsample size (scale 1)", async () => {
    // A = 10 + t stays above B = t; each set's draws spread by ±0.1 around its curve.
    const t = Array.from({ length: 9 }, (_, k) => 10 ** (k / 4 - 1));
    const R = 4;
    const wiggle = [-0.1, 0.1, -0.05, 0.05];
    const draws = (curve: number[]) => wiggle.flatMap((w) => curve.map((x) => x + w));
    const a = t.map((x) => 10 + x);
    const floats = Float64Array.from([...t, ...a, ...t, ...draws(a), ...draws(t)]);
    const spec: ExplorerSpec = {
      condition: "r/d", representation: "r", distance: "d", sets: ["A", "B"], ci: 0.95,
      finding_level: 0.95, finding_families: 1,
      families: [{ name: "magnitude", parameter: "t", axis: "log", step: false,
        long_name: "magnitude", integer: false, symbol: "t", axis_title: "scale t",
        extendable: false, band: null, n: 9, grid: 0, values: 9, lower: null, upper: null,
        boot: 27, n_boot: R, replicate_kind: "multiplier", finding_z: 3,
        uncertainty: "multiplier draws (4)" }],
    };
    const model = fakeModel();
    model.set("spec", spec);
    model.set("curves", new DataView(floats.buffer));
    const el = document.createElement("div");
    const cleanup = widget.render({ model, el });
    const cell = el.querySelector("table tr:nth-child(2) td:nth-child(3)") as HTMLElement;
    expect(cell.dataset.verdict).toBe("dominates");
    expect(cell.textContent).toBe("≻");
    expect(cell.title).toMatch(/^A vs B in magnitude: A ahead, supported at 95%; these samples: A ahead/);
    const summary = el.querySelector(".dp-summary")?.textContent ?? "";
    expect(summary.split("\n")[0]).toMatch(/^Findings hold with 95% confidence/);
    expect(summary).toContain("- magnitude: A ≻ B.");
    expect(summary).toContain("- A ≻ B in magnitude");
    cleanup();
  });
});
