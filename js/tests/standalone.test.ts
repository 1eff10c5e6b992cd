// The kernel-free model behind the JupyterLab extension and the HTML report.
import { describe, expect, it } from "vitest";
import { mountStandalone, standaloneModel, type StandalonePayload } from "../standalone";
import type { ExplorerSpec } from "../model";

function base64(floats: number[]): string {
  const bytes = new Uint8Array(Float64Array.from(floats).buffer);
  return btoa(String.fromCharCode(...bytes));
}

// Two conditions of one log-axis family over t = 0.1 … 10: in "cross", A = t and B = 1/t
// cross at t = 1; in "apart", A = 2t stays above B = t.
function payload(): StandalonePayload {
  const t = Array.from({ length: 9 }, (_, k) => 10 ** (k / 4 - 1));
  const spec = (condition: string): ExplorerSpec => ({
    condition, representation: condition, distance: "d", sets: ["A", "B"],
    families: [{ name: "magnitude", parameter: "t", axis: "log", step: false,
      // extendable as a live widget with a profiler saved it: offline, the buttons hide.
      long_name: "magnitude", integer: false, symbol: "t", axis_title: "scale t",
      extendable: true, band: null, n: 9, grid: 0, values: 9, lower: null, upper: null }],
  });
  return {
    version: 1,
    condition: "cross/d",
    conditions: {
      "cross/d": { spec: spec("cross/d"), curves: base64([...t, ...t, ...t.map((x) => 1 / x)]) },
      "apart/d": { spec: spec("apart/d"), curves: base64([...t, ...t.map((x) => 2 * x), ...t]) },
    },
  };
}

describe("standalone explorer", () => {
  it("reads the payload's curves and switches conditions without a kernel", async () => {
    const el = document.createElement("div");
    document.body.append(el);
    const cleanup = mountStandalone(el, payload());
    await expect.poll(() => el.querySelectorAll("svg .mark-line path").length).toBe(2);
    const verdict = () =>
      (el.querySelector("table tr:nth-child(2) td:nth-child(3)") as HTMLElement).dataset.point;
    expect(verdict()).toBe("crosses");
    const chooser = el.querySelector("select") as HTMLSelectElement;
    expect(chooser.hidden).toBe(false);
    chooser.value = "apart/d";
    chooser.dispatchEvent(new Event("change"));
    expect(el.querySelector("h3")?.textContent).toBe("Diversity profiles — apart/d");
    expect(verdict()).toBe("dominates");
    // Nothing can compute more grid points here, so those buttons are hidden.
    expect(el.querySelector(".dp-explorer")?.classList.contains("dp-offline")).toBe(true);
    expect(getComputedStyle(el.querySelector(".dp-extend") as Element).display).toBe("none");
    cleanup();
    expect(el.children.length).toBe(0);
  });

  it("names the problem when the payload comes from another version", () => {
    const future = { ...payload(), version: 2 } as unknown as StandalonePayload;
    expect(() => standaloneModel(future)).toThrow(/payload version 2/);
  });
});
