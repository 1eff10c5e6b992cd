// The dominance rule, for the browser: the same eight steps as
// src/diversity_profiles/comparison/_verdict.py (the single specification), but step 8's
// family-wise z, which Python computes and sends (see replicateSd below). Tested
// against fixtures that Python generates from that module (tests/test_verdict_js.py);
// its default tolerances come from it too, through the generated constants.ts.
import { ATOL, MIN_SHARE, RTOL } from "./constants";

export type Verdict = "dominates" | "dominated" | "tied" | "crosses";
export type ConfidentVerdict = Verdict | "uncertain";
/** Step 7: curves with bounds (large-n values) add "bounds overlap". */
export const OVERLAP = "bounds overlap";
export type BoundedVerdict = Verdict | typeof OVERLAP;
export type Axis = "log" | "linear" | "none";

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

/** Step 1's tie tolerance at every point (0 where a value is infinite). */
export function tieTolerance(a: Num, b: Num, rtol = RTOL, atol = ATOL): Float64Array {
  const out = new Float64Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const scale = Math.max(Math.abs(a[k]), Math.abs(b[k]));
    out[k] = atol + rtol * (Number.isFinite(scale) ? scale : 0);
  }
  return out;
}

export type MarginUnit = "n" | "relative";

/** Step 5: the margin at every point, never below the tie tolerance. */
export function margins(
  a: Num, b: Num, unit: MarginUnit, margin: number, n: number, rtol = RTOL, atol = ATOL,
): Float64Array {
  const tol = tieTolerance(a, b, rtol, atol);
  const out = new Float64Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const scale = Math.max(Math.abs(a[k]), Math.abs(b[k]));
    const m = unit === "n" ? margin * n : margin * (Number.isFinite(scale) ? scale : 0);
    out[k] = Math.max(m, tol[k]);
  }
  return out;
}

/** Step 5: the signs where the lead exceeds the margin, 0 elsewhere. */
export function materialSigns(a: Num, b: Num, s: ArrayLike<number>, m: Num): Int8Array {
  const out = new Int8Array(s.length);
  for (let k = 0; k < s.length; k++) out[k] = Math.abs(a[k] - b[k]) > m[k] ? s[k] : 0;
  return out;
}

const negate = (s: ArrayLike<number>) => Int8Array.from(s, (x) => -x);

function shareHolds(theta: Num, a: Num, b: Num, sm: ArrayLike<number>, axis: Axis, step: boolean,
                    minShare: number): boolean {
  let any = false;
  for (let k = 0; k < sm.length; k++) if (sm[k] > 0) any = true;
  return any && shareAhead(theta, a, b, sm, axis, step) >= minShare;
}

/** A side holds: somewhere, and on at least minShare of the domain (step 4 on its indicator). */
function holds(theta: Num, mask: boolean[], axis: Axis, step: boolean, minShare: number): boolean {
  const ind = Int8Array.from(mask, (x) => (x ? 1 : 0));
  return shareHolds(theta, Float64Array.from(ind), new Float64Array(ind.length), ind, axis, step,
    minShare);
}

export interface MarginReading { verdict: Verdict; lead: number; share: number }

/** Step 5: the verdict with the margin, and the dismissed side's largest lead and share. */
export function marginVerdict(
  theta: Num, a: Num, b: Num, s: ArrayLike<number>, m: Num, axis: Axis, step: boolean,
  minShare = MIN_SHARE, unit: MarginUnit = "relative",
): MarginReading {
  const sm = materialSigns(a, b, s, m);
  const ahead = shareHolds(theta, a, b, sm, axis, step, minShare);
  const behind = shareHolds(theta, b, a, negate(sm), axis, step, minShare);
  const verdict = verdictOf([ahead ? 1 : 0, behind ? -1 : 0]);
  const side = verdict === "dominates" ? -1 : verdict === "dominated" ? 1 : 0;
  let lead = -Infinity;
  let found = false;
  for (let k = 0; side !== 0 && k < s.length; k++) {
    if (s[k] !== side) continue;
    found = true;
    let gap = side * (a[k] - b[k]);
    if (unit !== "n") gap /= Math.max(Math.abs(a[k]), Math.abs(b[k]));
    lead = Number.isNaN(gap) || Number.isNaN(lead) ? NaN : Math.max(lead, gap);
  }
  if (!found) return { verdict, lead: NaN, share: NaN };
  const share = side > 0 ? shareAhead(theta, a, b, s, axis, step)
    : shareAhead(theta, b, a, negate(s), axis, step);
  return { verdict, lead, share };
}

/** Step 6: ``sqrt(m / (n - m))``, the delete-d jackknife's rate correction. */
export function subsampleScale(n: number, m: number): number {
  return n > m ? Math.sqrt(m / (n - m)) : 0;
}

/** Step 6: one set's replicate errors (replicate r at point k is boot[r][k]), with the growth factor. */
export function centredReplicates(boot: Num[], estimate: Num, scale: number,
                                  cap: number): Float64Array[] {
  const R = boot.length;
  const K = estimate.length;
  const mean = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    let sum = 0;
    for (let r = 0; r < R; r++) sum += boot[r][k];
    mean[k] = sum / R;
  }
  return boot.map((row) => {
    const out = new Float64Array(K);
    for (let k = 0; k < K; k++) {
      const ratio = estimate[k] / mean[k];
      const g = Number.isFinite(ratio) ? Math.min(Math.max(ratio, 1), cap) : 1;
      out[k] = scale * g * (row[k] - mean[k]);
    }
    return out;
  });
}

/** Each point's largest finite |value| over the rows (1 where there is none): the unit that
 *  values are squared in, so that squares neither underflow nor overflow (_point_scale). */
function pointScale(rows: Num[], K: number): Float64Array {
  const unit = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    let top = 0;
    for (const row of rows) if (Number.isFinite(row[k])) top = Math.max(top, Math.abs(row[k]));
    unit[k] = top > 0 ? top : 1;
  }
  return unit;
}

/** Step 6: the band of a - b from each set's replicate errors: pointwise or simultaneous. */
export function bandOfDifference(
  a: Num, b: Num, centredA: Num[], centredB: Num[], ci: number, simultaneous = true,
): [Float64Array, Float64Array] {
  const K = a.length;
  const R = centredA.length;
  const alpha = (1 - ci) / 2;
  const lower = new Float64Array(K);
  const upper = new Float64Array(K);
  // Flat arrays and plain loops (this runs for every pair on every step of a domain
  // control): the same operations in the same order as before, so the same numbers.
  const c = new Float64Array(R * K); // replicate r's error of a - b at point k: c[r * K + k]
  for (let r = 0; r < R; r++) {
    const ra = centredA[r];
    const rb = centredB[r];
    for (let k = 0; k < K; k++) c[r * K + k] = ra[k] - rb[k];
  }
  const d = (k: number) => (a[k] === b[k] ? 0 : a[k] - b[k]);
  if (!simultaneous) {
    const reps = new Float64Array(R);
    for (let k = 0; k < K; k++) {
      for (let r = 0; r < R; r++) reps[r] = c[r * K + k];
      lower[k] = d(k) - quantile(reps, 1 - alpha);
      upper[k] = d(k) - quantile(reps, alpha);
    }
    return [lower, upper];
  }
  // Mean and sd in units of each point's largest error (squares of tiny or huge errors
  // would underflow or overflow), as in Python (_point_scale).
  const unit = new Float64Array(K);
  const finite = new Uint8Array(K);
  for (let k = 0; k < K; k++) {
    let top = 0;
    let all = 1;
    for (let r = 0; r < R; r++) {
      const x = c[r * K + k];
      if (Number.isFinite(x)) top = Math.max(top, Math.abs(x));
      else all = 0;
    }
    unit[k] = top > 0 ? top : 1;
    finite[k] = all;
  }
  const u = new Float64Array(R * K);
  for (let r = 0; r < R; r++) for (let k = 0; k < K; k++) u[r * K + k] = c[r * K + k] / unit[k];
  const bias = new Float64Array(K);
  const sd = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    if (!finite[k]) continue;
    let sum = 0;
    for (let r = 0; r < R; r++) sum += u[r * K + k];
    bias[k] = sum / R;
    if (R > 1) {
      let ss = 0;
      for (let r = 0; r < R; r++) ss += (u[r * K + k] - bias[k]) ** 2;
      sd[k] = Math.sqrt(ss / (R - 1));
    }
  }
  let z = 0;
  let spreads = false;
  for (let k = 0; k < K; k++) if (finite[k] && sd[k] > 0) spreads = true;
  if (spreads) {
    const maxima = new Float64Array(R);
    for (let r = 0; r < R; r++) {
      let top = -Infinity;
      for (let k = 0; k < K; k++) {
        if (finite[k] && sd[k] > 0) top = Math.max(top, Math.abs(u[r * K + k] - bias[k]) / sd[k]);
      }
      maxima[r] = top;
    }
    z = quantile(maxima, ci);
  }
  for (let k = 0; k < K; k++) {
    bias[k] *= unit[k];
    sd[k] *= unit[k];
  }
  for (let k = 0; k < K; k++) {
    const half = finite[k] ? z * sd[k] : Infinity;
    lower[k] = d(k) - bias[k] - half;
    upper[k] = d(k) - bias[k] + half;
  }
  return [lower, upper];
}

/** Step 6: the verdict that holds with confidence, from the band of a - b. */
export function confidentVerdict(
  theta: Num, lower: Num, upper: Num, m: Num, axis: Axis, step: boolean, minShare = MIN_SHARE,
): ConfidentVerdict {
  const K = lower.length;
  const mask = (f: (k: number) => boolean) => Array.from({ length: K }, (_, k) => f(k));
  const ahead = holds(theta, mask((k) => lower[k] > m[k]), axis, step, minShare);
  const behind = holds(theta, mask((k) => upper[k] < -m[k]), axis, step, minShare);
  const maybeAhead = holds(theta, mask((k) => !(upper[k] <= m[k])), axis, step, minShare);
  const maybeBehind = holds(theta, mask((k) => !(lower[k] >= -m[k])), axis, step, minShare);
  if (ahead && behind) return "crosses";
  if (ahead && !maybeBehind) return "dominates";
  if (behind && !maybeAhead) return "dominated";
  if (!maybeAhead && !maybeBehind) return "tied";
  return "uncertain";
}

/** Step 7: +1 where A's band lies above B's, -1 below, 0 where they overlap; and the gap. */
export function separationSigns(
  loA: Num, hiA: Num, loB: Num, hiB: Num, rtol = RTOL, atol = ATOL,
): { s: Int8Array; gap: Float64Array } {
  const above = signs(loA, hiB, rtol, atol);
  const below = signs(hiA, loB, rtol, atol);
  const s = new Int8Array(loA.length);
  const gap = new Float64Array(loA.length);
  for (let k = 0; k < s.length; k++) {
    if (above[k] > 0) {
      s[k] = 1;
      gap[k] = loA[k] - hiB[k];
    } else if (below[k] < 0) {
      s[k] = -1;
      gap[k] = hiA[k] - loB[k];
    }
  }
  return { s, gap };
}

export interface BoundedReading { verdict: BoundedVerdict; lead: number; share: number }

/** Step 7: the verdict of curves with bounds ([lower, upper] per set), and the dismissed
 *  side's largest possible lead and share. Point bands give marginVerdict's answer. */
export function boundsVerdict(
  theta: Num, a: Num, b: Num, boundsA: [Num, Num], boundsB: [Num, Num], m: Num, axis: Axis,
  step: boolean, minShare = MIN_SHARE, unit: MarginUnit = "relative", rtol = RTOL, atol = ATOL,
): BoundedReading {
  const [loA, hiA] = boundsA;
  const [loB, hiB] = boundsB;
  const sLow = signs(loA, hiB, rtol, atol); // +1: A surely ahead; -1: B possibly ahead
  const sHigh = signs(hiA, loB, rtol, atol); // +1: A possibly ahead; -1: B surely ahead
  const mLow = materialSigns(loA, hiB, sLow, m);
  const mHigh = materialSigns(hiA, loB, sHigh, m);
  const ahead = shareHolds(theta, loA, hiB, mLow, axis, step, minShare);
  const behind = shareHolds(theta, loB, hiA, negate(mHigh), axis, step, minShare);
  const maybeAhead = shareHolds(theta, hiA, loB, mHigh, axis, step, minShare);
  const maybeBehind = shareHolds(theta, hiB, loA, negate(mLow), axis, step, minShare);
  let verdict: BoundedVerdict;
  if (ahead && behind) verdict = "crosses";
  else if (ahead && !maybeBehind) verdict = "dominates";
  else if (behind && !maybeAhead) verdict = "dominated";
  else if (!maybeAhead && !maybeBehind) verdict = "tied";
  else verdict = OVERLAP;
  const side = verdict === "dominates" ? -1 : verdict === "dominated" ? 1 : 0;
  const plain = side > 0 ? sHigh : sLow;
  let lead = -Infinity;
  let found = false;
  for (let k = 0; side !== 0 && k < plain.length; k++) {
    if (plain[k] !== side) continue;
    found = true;
    const aheadEnd = side > 0 ? hiA[k] : hiB[k];
    const behindEnd = side > 0 ? loB[k] : loA[k];
    let gap = aheadEnd - behindEnd;
    if (unit !== "n") {
      gap /= Math.max(Math.max(Math.abs(a[k]), Math.abs(b[k]), Math.abs(aheadEnd)),
        Math.abs(behindEnd));
    }
    lead = Number.isNaN(gap) || Number.isNaN(lead) ? NaN : Math.max(lead, gap);
  }
  if (!found) return { verdict, lead: NaN, share: NaN };
  const share = side > 0 ? shareAhead(theta, hiA, loB, sHigh, axis, step)
    : shareAhead(theta, hiB, loA, negate(sLow), axis, step);
  return { verdict, lead, share };
}

/** Step 8: findings, what the samples support: a verdict, or why there is none. */
export const NOT_DISTINGUISHABLE = "not distinguishable";
export const NO_UNCERTAINTY = "no uncertainty";
export type Finding = Verdict | typeof NOT_DISTINGUISHABLE | typeof NO_UNCERTAINTY;

/** Step 8: each point's standard deviation from one set's centred replicate errors
 *  (replicate r at point k is centred[r][k]); NaN where a replicate is not finite, and
 *  everywhere with fewer than two replicates. */
export function replicateSd(centred: Num[], K = centred[0]?.length ?? 0): Float64Array {
  const R = centred.length;
  const sd = new Float64Array(K).fill(NaN);
  if (R < 2) return sd;
  const unit = pointScale(centred, K); // squared in units of the largest error
  for (let k = 0; k < K; k++) {
    let ss = 0;
    let finite = true;
    for (let r = 0; r < R && finite; r++) {
      const x = centred[r][k] / unit[k];
      finite = Number.isFinite(x);
      ss += x * x;
    }
    if (finite) sd[k] = unit[k] * Math.sqrt(ss / (R - 1));
  }
  return sd;
}

/** Step 8: the sd of a difference of independent sets, sqrt(sdA^2 + sdB^2), squared in
 *  units of the larger (NaN where either is NaN), as combined_sd in Python. */
export function combinedSd(sdA: Num, sdB: Num): Float64Array {
  const out = new Float64Array(sdA.length);
  for (let k = 0; k < out.length; k++) {
    const x = Math.abs(sdA[k]);
    const y = Math.abs(sdB[k]);
    const top = Math.max(x, y);
    if (Number.isNaN(x) || Number.isNaN(y)) out[k] = NaN;
    else if (top === Infinity) out[k] = Infinity;
    else {
      const unit = top > 0 ? top : 1;
      out[k] = unit * Math.sqrt((x / unit) ** 2 + (y / unit) ** 2);
    }
  }
  return out;
}

/** Step 8 with bounds: how far below and above a - b the brackets let the true difference
 *  reach, (a - loA) + (hiB - b) and (hiA - a) + (b - loB) (a value outside its bracket adds
 *  0; a NaN bound is unbounded), as bracket_reach in Python. */
export function bracketReach(a: Num, b: Num, boundsA: [Num, Num], boundsB: [Num, Num]):
  [Float64Array, Float64Array] {
  const [loA, hiA] = boundsA;
  const [loB, hiB] = boundsB;
  const below = new Float64Array(a.length);
  const above = new Float64Array(a.length);
  for (let k = 0; k < a.length; k++) {
    const lo = Math.max(a[k] - loA[k], 0) + Math.max(hiB[k] - b[k], 0);
    const hi = Math.max(hiA[k] - a[k], 0) + Math.max(b[k] - loB[k], 0);
    below[k] = Number.isNaN(lo) ? Infinity : lo;
    above[k] = Number.isNaN(hi) ? Infinity : hi;
  }
  return [below, above];
}

/** Step 8 with bounds, for samplesNeeded: the sd whose z sd is z sd + reach (NaN stays NaN;
 *  with z = 0 the sd as it is), as widened_sd. */
export function widenedSd(sd: Num, reach: Num, z: number): Float64Array {
  const out = new Float64Array(sd.length);
  for (let k = 0; k < sd.length; k++) {
    out[k] = Number.isFinite(z) && z > 0 ? sd[k] + reach[k] / z : sd[k];
  }
  return out;
}

// familywise_z (step 8's z) is not ported: it draws random Gaussian recombinations of
// the replicates, which the browser could only imitate. Python sends each family's z for
// the full grid (FamilySpec.finding_z), and the view reuses it on any narrowed domain: z
// is a quantile of the maximum over pairs and points, and the maximum over fewer points
// is never larger, so the full grid's z is valid there too, conservatively (compare with
// domains= recomputes a z for the narrowed domain, which can only be smaller).

/** Step 8: the finding from the difference d and its standard deviation sd (NaN: no band
 *  at that point, an unbounded one) under the family-wise z. */
export function finding(
  theta: Num, d: Num, sd: Num, z: number, m: Num, axis: Axis, step: boolean,
  minShare = MIN_SHARE, reach: Num | null = null,
): Finding {
  const K = d.length;
  const lower = new Float64Array(K);
  const upper = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    const half = (Number.isFinite(sd[k]) ? z * sd[k] : Infinity) + (reach ? reach[k] : 0);
    lower[k] = d[k] - half; // an infinite d with an unbounded band: NaN, as in numpy
    upper[k] = d[k] + half;
  }
  const got = confidentVerdict(theta, lower, upper, m, axis, step, minShare);
  return got === "uncertain" ? NOT_DISTINGUISHABLE : got;
}

/** Step 9: the side that step 8's band orders on part of the domain (+1: the first set, -1:
 *  the second; NaN when neither, or both) and the [first, last] parameters of each run of
 *  grid points where it is confidently ahead. */
export function findingParts(
  theta: Num, d: Num, sd: Num, z: number, m: Num, axis: Axis, step: boolean,
  minShare = MIN_SHARE, reach: Num | null = null,
): { side: number; parts: [number, number][] } {
  const K = d.length;
  const ahead: boolean[] = [];
  const behind: boolean[] = [];
  for (let k = 0; k < K; k++) {
    const half = (Number.isFinite(sd[k]) ? z * sd[k] : Infinity) + (reach ? reach[k] : 0);
    ahead.push(d[k] - half > m[k]); // NaN compares false, as in numpy
    behind.push(d[k] + half < -m[k]);
  }
  const aHolds = holds(theta, ahead, axis, step, minShare);
  const bHolds = holds(theta, behind, axis, step, minShare);
  if (aHolds === bHolds) return { side: NaN, parts: [] };
  const mask = aHolds ? ahead : behind;
  const parts: [number, number][] = [];
  for (let k = 0; k < K; k++) {
    if (!mask[k]) continue;
    const first = k;
    while (k + 1 < K && mask[k + 1]) k++;
    parts.push([theta[first], theta[k]]);
  }
  return { side: aHolds ? 1 : -1, parts };
}

export interface SamplesNeeded { need: number; at: number; side: number }

/** Step 8: about how many samples per set would make the leading side's dominance
 *  confident, the point its lead is read at, and that side (+1: the first set, -1: the
 *  second); NaN, -1 and NaN when no point leads beyond the margin, or the other side leads
 *  beyond it on minShare of the points. */
export function samplesNeeded(dIn: Num, sdIn: Num, z: number, mIn: Num, n: number,
                              minShare: number): SamplesNeeded {
  const none = { need: NaN, at: -1, side: NaN };
  const K = dIn.length;
  const ok = Array.from({ length: K }, (_, k) =>
    Number.isFinite(dIn[k]) && Number.isFinite(sdIn[k]) && sdIn[k] > 0);
  // Each point in units of its largest of |d|, sd and m (the needs are ratios; tiny values
  // must not lose their digits in subnormal floats), as in Python.
  const unit = Float64Array.from({ length: K }, (_, k) => {
    const top = Math.max(Math.abs(dIn[k]), Math.abs(sdIn[k]), Math.abs(mIn[k]));
    return ok[k] && top > 0 ? top : 1;
  });
  const d = Float64Array.from({ length: K }, (_, k) => dIn[k] / unit[k]);
  const sd = Float64Array.from({ length: K }, (_, k) => sdIn[k] / unit[k]);
  const m = Float64Array.from({ length: K }, (_, k) => mIn[k] / unit[k]);
  const usable = ok.filter((x) => x).length;
  if (usable === 0) return none;
  const gap = Float64Array.from({ length: K }, (_, k) => (ok[k] ? d[k] : 0));
  let up = 0;
  let down = 0;
  for (let k = 0; k < K; k++) {
    if (gap[k] > m[k]) up++;
    if (-gap[k] > m[k]) down++;
  }
  const side = up >= down ? 1 : -1;
  const lead = gap.map((x) => side * x);
  const need = Math.max(1, Math.ceil(minShare * usable));
  let behindCount = 0;
  let anyAhead = false;
  for (let k = 0; k < K; k++) {
    if (ok[k] && lead[k] < -m[k]) behindCount++;
    if (ok[k] && lead[k] > m[k]) anyAhead = true;
  }
  if (behindCount >= need || !anyAhead) return none;
  const ahead = new Float64Array(K);
  const behind = new Float64Array(K);
  for (let k = 0; k < K; k++) {
    ahead[k] = ok[k] && lead[k] > m[k] ? (z * sd[k] / (lead[k] - m[k])) ** 2 : Infinity;
    const b = (z * sd[k] / Math.max(lead[k] + m[k], 0)) ** 2;
    behind[k] = Number.isNaN(b) ? Infinity : b; // 0 / 0: no noise and no room, unbounded
  }
  // numpy's stable argsort (no NaN can occur in ``ahead``)
  const order = Array.from({ length: K }, (_, k) => k)
    .sort((i, j) => (ahead[i] < ahead[j] ? -1 : ahead[i] > ahead[j] ? 1 : i - j));
  const pick = order[need - 1];
  if (!Number.isFinite(ahead[pick])) return none;
  // All but fewer than ``need`` points must not be possibly behind; the need and the point
  // read are the binding one of the two (numpy's stable argsort of -behind over ok points).
  const byNeed = Array.from({ length: K }, (_, k) => k).filter((k) => ok[k])
    .sort((i, j) => (behind[i] > behind[j] ? -1 : behind[i] < behind[j] ? 1 : i - j));
  let total = ahead[pick];
  let at = pick;
  if (byNeed.length >= need && behind[byNeed[need - 1]] > total) {
    at = byNeed[need - 1];
    total = behind[at];
  }
  if (!Number.isFinite(total) || total <= 1) return none; // <= n: the share, not the noise, is short
  return { need: Math.ceil(n * total), at, side };
}
