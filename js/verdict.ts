// The dominance rule, for the browser: the same five steps as
// src/diversity_profiles/verdict.py (the single specification). Tested against
// fixtures that Python generates from that module (tests/test_verdict_js.py).

export type Verdict = "dominates" | "dominated" | "tied" | "crosses";
export type ConfidentVerdict = Verdict | "uncertain";
export type Axis = "log" | "linear" | "none";

export const RTOL = 1e-6;
export const ATOL = 1e-12;

type Num = ArrayLike<number>;

/** Step 1: +1 where A is ahead, -1 where B is, 0 at ties. */
export function signs(a: Num, b: Num, rtol = RTOL, atol = ATOL): Int8Array {
  const out = new Int8Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const x = a[k];
    const y = b[k];
    if (x === y) continue; // equal values, equal infinities
    const scale = Math.max(Math.abs(x), Math.abs(y));
    const diff = x - y;
    if (Number.isFinite(scale) && Math.abs(diff) <= atol + rtol * scale) continue;
    const d = Number.isNaN(diff) ? x : diff; // -inf vs -inf handled above; inf - inf is NaN
    out[k] = d > 0 ? 1 : d < 0 ? -1 : 0;
  }
  return out;
}

/** Step 2: the verdict from the signs. */
export function verdictOf(s: ArrayLike<number>): Verdict {
  let ahead = false;
  let behind = false;
  for (let k = 0; k < s.length; k++) {
    if (s[k] > 0) ahead = true;
    else if (s[k] < 0) behind = true;
  }
  if (ahead && behind) return "crosses";
  if (ahead) return "dominates";
  if (behind) return "dominated";
  return "tied";
}

/** u = log(theta) on log axes (-inf at 0, inf at inf), theta otherwise. */
export function axisCoordinate(theta: Num, axis: Axis): Float64Array {
  const u = new Float64Array(theta.length);
  for (let k = 0; k < theta.length; k++) u[k] = axis === "log" ? Math.log(theta[k]) : theta[k];
  return u;
}

const fromU = (u: number, axis: Axis) => (axis === "log" ? Math.exp(u) : u);

function midpoint(theta: Num, u: Float64Array, lo: number, hi: number, axis: Axis): number {
  const tl = theta[lo];
  const th = theta[hi];
  if (th === Infinity) return Number.isFinite(tl) ? tl : th;
  if (Number.isFinite(u[lo]) && Number.isFinite(u[hi])) return fromU((u[lo] + u[hi]) / 2, axis);
  return (tl + th) / 2;
}

/** Step 3: parameter values where the leading curve changes. */
export function crossings(
  theta: Num, a: Num, b: Num, s: ArrayLike<number>, axis: Axis, step: boolean,
): number[] {
  const u = axisCoordinate(theta, axis);
  const nonzero: number[] = [];
  for (let k = 0; k < s.length; k++) if (s[k] !== 0) nonzero.push(k);
  const out: number[] = [];
  for (let m = 0; m + 1 < nonzero.length; m++) {
    const i = nonzero[m];
    const j = nonzero[m + 1];
    if (s[i] === s[j]) continue;
    if (j > i + 1) {
      out.push(midpoint(theta, u, i + 1, j - 1, axis)); // the tied run between them
    } else if (step) {
      out.push(midpoint(theta, u, i, j, axis));
    } else {
      const di = a[i] - b[i];
      const dj = a[j] - b[j];
      const r = Number.isFinite(di - dj) && di !== dj ? di / (di - dj) : 0.5;
      if (theta[j] === Infinity) out.push(theta[i]);
      else if (Number.isFinite(u[i])) out.push(fromU(u[i] + r * (u[j] - u[i]), axis));
      else out.push(theta[i] + r * (theta[j] - theta[i])); // theta = 0 on a log axis
    }
  }
  return out;
}

/** Step 4: share of the domain (along u) on which A is ahead. */
export function shareAhead(
  theta: Num, a: Num, b: Num, s: ArrayLike<number>, axis: Axis, step: boolean,
): number {
  const n = s.length;
  const aheadPoints = () => {
    let c = 0;
    for (let k = 0; k < n; k++) if (s[k] > 0) c++;
    return n ? c / n : 0;
  };
  if (n < 2) return aheadPoints();
  const u = axisCoordinate(theta, axis);
  const d = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    const diff = s[k] === 0 ? 0 : a[k] - b[k];
    d[k] = Number.isFinite(diff) ? diff : Number.isNaN(diff) ? s[k] : Math.sign(diff);
  }
  let total = 0;
  let ahead = 0;
  for (let k = 0; k + 1 < n; k++) {
    const length = u[k + 1] - u[k];
    if (!Number.isFinite(length)) continue;
    let frac: number;
    if (step) frac = s[k] > 0 ? 1 : 0;
    else {
      const d0 = d[k];
      const d1 = d[k + 1];
      if (d0 > 0 && d1 > 0) frac = 1;
      else if (d0 <= 0 && d1 <= 0) frac = 0;
      else {
        const root = Math.min(Math.max(d0 / (d0 - d1), 0), 1);
        frac = d0 > 0 ? root : 1 - root;
      }
    }
    total += length;
    ahead += frac * length;
  }
  return total > 0 ? ahead / total : aheadPoints();
}

/** numpy's default ("linear") quantile of the finite values. */
export function quantile(values: Num, p: number): number {
  const v = Array.from(values).filter((x) => !Number.isNaN(x)).sort((x, y) => x - y);
  if (!v.length) return NaN;
  const h = (v.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, v.length - 1);
  return v[lo] + (h - lo) * (v[hi] - v[lo]);
}

/** Step 5: basic bootstrap band of a - b; bootA[r][k] is replicate r at point k. */
export function bandOfDifference(
  a: Num, b: Num, bootA: Num[], bootB: Num[], ci: number,
): [Float64Array, Float64Array] {
  const alpha = (1 - ci) / 2;
  const lower = new Float64Array(a.length);
  const upper = new Float64Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const reps = bootA.map((row, r) => row[k] - bootB[r][k]);
    const d = a[k] - b[k];
    lower[k] = 2 * d - quantile(reps, 1 - alpha);
    upper[k] = 2 * d - quantile(reps, alpha);
  }
  return [lower, upper];
}

/** Step 5: the verdict that holds with confidence, from the band of a - b. */
export function confidentVerdict(
  a: Num, b: Num, lower: Num, upper: Num, rtol = RTOL, atol = ATOL,
): ConfidentVerdict {
  let anyAhead = false;
  let anyBehind = false;
  let undecided = false;
  const s = new Int8Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const tol = atol + rtol * Math.max(Math.abs(a[k]), Math.abs(b[k]));
    const ahead = lower[k] > tol;
    const behind = upper[k] < -tol;
    const tied = lower[k] >= -tol && upper[k] <= tol;
    anyAhead ||= ahead;
    anyBehind ||= behind;
    if (!(ahead || behind || tied)) undecided = true;
    s[k] = ahead ? 1 : behind ? -1 : 0;
  }
  if (anyAhead && anyBehind) return "crosses";
  if (undecided) return "uncertain";
  return verdictOf(s);
}
