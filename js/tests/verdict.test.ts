// The browser's verdict rule on curves with known answers (closed forms).
import { describe, expect, it } from "vitest";
import { confidentVerdict, crossings, shareAhead, signs, verdictOf } from "../verdict";

const geomspace = (a: number, b: number, n: number) =>
  Float64Array.from({ length: n }, (_, k) => a * (b / a) ** (k / (n - 1)));

describe("verdict rule", () => {
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

  it("needs the whole band above zero to call dominance with confidence", () => {
    const ones = [1, 1, 1];
    const zeros = [0, 0, 0];
    expect(confidentVerdict(ones, zeros, [0.5, 0.2, 0.1], ones)).toBe("dominates");
    expect(confidentVerdict(ones, zeros, [0.5, -0.2, 0.1], ones)).toBe("uncertain");
  });
});
