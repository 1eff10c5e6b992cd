// The browser's verdict rule on curves with known answers (closed forms).
import { describe, expect, it } from "vitest";
import {
  bandOfDifference, boundsVerdict, centredReplicates, confidentVerdict, crossings, finding, margins,
  marginVerdict, replicateSd, samplesNeeded, separationSigns, shareAhead, signs, verdictOf,
} from "../verdict";

const geomspace = (a: number, b: number, n: number) =>
  Float64Array.from({ length: n }, (_, k) => a * (b / a) ** (k / (n - 1)));

describe("verdict rule", () => {
  it("bounds: dominates only where they separate, else 'bounds overlap' (step 7)", () => {
    const t = geomspace(0.1, 10, 41);
    const a = t.map((x) => 10 + x);
    const b = t.map((x) => 9 + x);
    const m = margins(a, b, "relative", 0.01, 0);
    const band = (v: Float64Array, w: number): [Float64Array, Float64Array] =>
      [v.map((x) => x - w), v.map((x) => x + w)];
    expect(boundsVerdict(t, a, b, band(a, 0), band(b, 0), m, "log", false).verdict).toBe("dominates");
    expect(boundsVerdict(t, a, b, band(a, 0.3), band(b, 0.3), m, "log", false).verdict).toBe("dominates");
    expect(boundsVerdict(t, a, b, band(a, 0.8), band(b, 0.8), m, "log", false).verdict)
      .toBe("bounds overlap");
    // Crossing curves: separated on both sides of t = 1, overlapping between.
    const up = t.map((x) => 15 + 3 * Math.log(x));
    const down = t.map((x) => 15 - 3 * Math.log(x));
    const mc = margins(up, down, "relative", 0.01, 0);
    const [la, ha] = band(up, 0.5);
    const [lb, hb] = band(down, 0.5);
    expect(boundsVerdict(t, up, down, [la, ha], [lb, hb], mc, "log", false).verdict).toBe("crosses");
    const { s, gap } = separationSigns(la, ha, lb, hb);
    expect(crossings(t, gap, new Float64Array(gap.length), s, "log", false)).toHaveLength(1);
    expect(crossings(t, gap, new Float64Array(gap.length), s, "log", false)[0]).toBeCloseTo(1, 9);
    expect(boundsVerdict(t, up, down, band(up, 10), band(down, 10), mc, "log", false).verdict)
      .toBe("bounds overlap");
  });

  it("a shifted copy dominates and equal curves tie", () => {
    const q = geomspace(0.1, 10, 41);
    const base = q.map((x) => 5 / (1 + x));
    const up = base.map((x) => x + 0.5);
    expect(verdictOf(signs(up, base))).toBe("dominates");
    expect(verdictOf(signs(base, up))).toBe("dominated");
    expect(verdictOf(signs(base, base.slice()))).toBe("tied");
    expect(shareAhead(q, up, base, signs(up, base), "log", false)).toBe(1);
  });

  it("locates a crossing on a log axis by interpolation", () => {
    const q = geomspace(0.1, 10, 41);
    const a = q.map((x) => 3 + Math.log(x / 1.7));
    const b = q.map(() => 3);
    const s = signs(a, b);
    expect(verdictOf(s)).toBe("crosses");
    expect(crossings(q, a, b, s, "log", false)[0]).toBeCloseTo(1.7, 9);
    expect(shareAhead(q, a, b, s, "log", false)).toBeCloseTo(Math.log(10 / 1.7) / Math.log(100), 9);
  });

  it("puts a step function's crossing in the middle of a tied plateau", () => {
    const tau = Float64Array.from([0, 1, 2, 3, 4, 5]);
    const a = Float64Array.from([6, 4, 3, 3, 2, 1]);
    const b = Float64Array.from([5, 4, 3, 3, 3, 1]);
    const s = signs(a, b);
    expect(crossings(tau, a, b, s, "linear", true)).toEqual([2]);
    expect(shareAhead(tau, a, b, s, "linear", true)).toBeCloseTo(0.2, 12);
  });

  it("treats equal infinities as ties and ties within tolerance as ties", () => {
    expect(Array.from(signs([-Infinity, -Infinity, 1], [-Infinity, -1, -Infinity]))).toEqual([0, -1, 1]);
    expect(verdictOf(signs([1, 2, 3], [1 + 1e-9, 2, 3]))).toBe("tied");
  });

  it("needs the whole band above the margin's floor to call dominance with confidence", () => {
    const x = [1, 2, 3];
    const ones = [1, 1, 1];
    const m = [0.05, 0.05, 0.05];
    expect(confidentVerdict(x, [0.5, 0.2, 0.1], ones, m, "linear", false)).toBe("dominates");
    expect(confidentVerdict(x, [0.5, -0.2, 0.1], ones, m, "linear", false)).toBe("uncertain");
    expect(confidentVerdict(x, [-0.01, -0.01, -0.01], [0.01, 0.01, 0.01], m, "linear", false)).toBe("tied");
  });

  it("dismisses a one-sample lead of a count on 1% of the domain", () => {
    // 101 thresholds; A leads by one circle at the second, B by 10 from the third on.
    const tau = Float64Array.from({ length: 101 }, (_, k) => k / 100);
    const a = new Float64Array(101).fill(150);
    const b = a.map((_, k) => (k === 1 ? 149 : k >= 2 ? 160 : 150));
    const s = signs(a, b);
    expect(verdictOf(s)).toBe("crosses");
    const m = margins(a, b, "n", 0.01, 150); // 1.5 samples
    const reading = marginVerdict(tau, a, b, s, m, "linear", true, 0.05, "n");
    expect(reading.verdict).toBe("dominated");
    expect(reading.lead).toBe(1);
    expect(reading.share).toBeCloseTo(0.01, 12);
    // Without the margin, the blip makes a crossing again.
    const none = margins(a, b, "n", 0, 150);
    expect(marginVerdict(tau, a, b, s, none, "linear", true, 0, "n").verdict).toBe("crosses");
  });

  it("widens a simultaneous band over a pointwise one (sup-t over the replicates)", () => {
    // Two points, three replicate errors each: sd 1 and 2, |z| maxima 1, 0, 1.
    const c = [[-1, -2], [0, 0], [1, 2]];
    const zero = c.map(() => [0, 0]);
    const [lo, hi] = bandOfDifference([5, 5], [0, 0], c, zero, 0.5, true);
    expect(Array.from(lo)).toEqual([4, 3]);
    expect(Array.from(hi)).toEqual([6, 7]);
    // Replicate errors: centred on their mean, scaled by the rate correction.
    const errors = centredReplicates([[1], [3]], [2], 0.5, 2);
    expect(errors.map((r) => r[0])).toEqual([-0.5, 0.5]);
    // A count that grows with n: the estimate is twice the replicates' mean (m = n/2).
    const grown = centredReplicates([[1], [3]], [4], 1, 2);
    expect(grown.map((r) => r[0])).toEqual([-2, 2]);
  });

  it("reads findings from a family-wise band and says how many samples a lead needs (step 8)", () => {
    const x = [0, 0.25, 0.5, 0.75, 1];
    const m = x.map(() => 0.01);
    const same = (v: number) => x.map(() => v);
    expect(finding(x, same(0.5), same(0.1), 3, m, "linear", false)).toBe("dominates");
    expect(finding(x, same(0.2), same(0.1), 3, m, "linear", false)).toBe("not distinguishable");
    // A point without an sd has no band: it can be anything.
    expect(finding(x, same(0.5), same(NaN), 3, m, "linear", false)).toBe("not distinguishable");
    // A lead of 0.02 with noise 0.01 at n = 200 needs (3 * 0.01 / 0.02)^2 = 2.25 times n.
    expect(samplesNeeded([0.02], [0.01], 3, [0], 200, 0.05)).toEqual({ need: 450, at: 0, side: 1 });
    expect(samplesNeeded([0.02], [NaN], 3, [0], 200, 0.05)).toEqual({ need: NaN, at: -1, side: NaN });
    // sd from centred errors with ddof 1; NaN where a replicate is not finite or alone.
    expect(Array.from(replicateSd([[-1, NaN], [1, 0]]))).toEqual([Math.SQRT2, NaN]);
    expect(Array.from(replicateSd([[1, 2]]))).toEqual([NaN, NaN]);
  });
});
