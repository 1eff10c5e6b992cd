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
    expect(cell.dataset.verdict).toBe("crosses");
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
    expect(cell.dataset.verdict).toBe("dominates");
    cleanup();
  });
});
