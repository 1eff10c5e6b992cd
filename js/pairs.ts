// The rule applied to one family's pairs of sets for the current domain: the verdicts of
// compare (src/diversity_profiles/comparison/_compare.py), computed with verdict.ts, the
// browser's copy of the one specification (comparison/_verdict.py). Everything the
// matrices and the summary say about a pair comes from here.
import { MARGIN, MIN_SHARE } from "./constants";
import type { ExplorerSpec, FamilySpec } from "./model";
import type { Reading } from "./wording";
import {
  bandOfDifference, boundsVerdict, bracketReach, centredReplicates, combinedSd, confidentVerdict, crossings,
  finding, findingParts, widenedSd,
  margins, marginVerdict, NO_UNCERTAINTY, NOT_DISTINGUISHABLE, replicateSd, samplesNeeded,
  separationSigns, shareAhead, signs, subsampleScale, tieTolerance, verdictOf,
  type BoundedVerdict, type ConfidentVerdict, type Finding,
} from "./verdict";

/** How a family's parameter is written in text (from the registry; the dimension name if absent). */
export const symbolOf = (fam: FamilySpec): string => fam.symbol || (fam.parameter ?? "");

export interface Curve {
  values: Float64Array;
  lower: Float64Array | null;
  upper: Float64Array | null;
  boot?: Float64Array[] | null; // replicates on the full grid (FamilySpec.replicate_kind)
  bounds?: [Float64Array, Float64Array] | null; // large-n bounds the verdicts use (step 7)
}

export interface PairResult {
  a: number; b: number;
  verdict: BoundedVerdict; // with the margin (what compare's ``verdict`` says)
  plain: BoundedVerdict; // without it
  lead: number; // the dismissed side's largest lead (samples, or relative); NaN if none
  minorShare: number;
  confident: ConfidentVerdict | "no band"; // over this domain, simultaneous band
  crossings: number[]; share: number;
  /** What the samples support over this domain (step 8, compare's ``finding``). */
  finding: Finding;
  // For a lead not distinguishable: samples per set that would resolve it, the parameter
  // it is read at, the lead and the family-wise noise there (samples, or relative); NaN if none.
  nNeeded: number; neededAt: number; leadAt: number; noiseAt: number;
  leadSide: number; // +1: a leads (the side nNeeded would make confident), -1: b; NaN if none
  /** Step 9, for a pair not distinguishable over this domain: +1 where a is confidently ahead
   *  on part of it, -1 where b is, NaN where neither; and those parts ([first, last] of each
   *  run of grid points). */
  partSide: number; parts: [number, number][];
}

/** What the rule needs besides the curves: sizes, replicate scales, level, min share. */
export interface RuleContext {
  n: number[]; scales: number[] | null; caps: number[] | null; ci: number; minShare: number;
}

/** Per set, the rate correction sqrt(m/(n-m)) and growth cap n/m of replicates of size m. */
function replicateScales(n: number[], m: number[]): { scales: number[]; caps: number[] } {
  return { scales: m.map((size, k) => subsampleScale(n[k], size)), caps: m.map((size, k) => n[k] / size) };
}

export function ruleContext(spec: ExplorerSpec): RuleContext {
  const n = (spec.n_samples ?? spec.sets.map(() => null)).map((x) => x ?? NaN);
  const m = spec.subsample_size;
  const sized = m ? replicateScales(n, m) : null;
  return {
    n,
    scales: sized ? sized.scales : null,
    caps: sized ? sized.caps : null,
    ci: spec.ci ?? 0.95,
    minShare: spec.min_share ?? MIN_SHARE,
  };
}

/** Replicate errors of every set on the full grid (centring is pointwise: slice later).
 *  Multiplier draws need no rescaling (scale 1, growth cap 1); subsample replicates are
 *  scaled by the family's own subsample_size (the condition's for older payloads), and
 *  without it they give no errors (as in compare). */
export function centredOf(fam: FamilySpec, curves: Curve[], ctx: RuleContext): Float64Array[][] | null {
  if (curves.some((c) => !c.boot)) return null;
  const multiplier = fam.replicate_kind === "multiplier";
  const own = fam.subsample_size ? replicateScales(ctx.n, fam.subsample_size) : null;
  const scales = multiplier ? curves.map(() => 1) : own ? own.scales : ctx.scales;
  const caps = multiplier ? curves.map(() => 1) : own ? own.caps : ctx.caps;
  if (!scales || !caps || !scales.every(Number.isFinite)) return null;
  return curves.map((c, k) => centredReplicates(c.boot!, c.values, scales[k], caps[k]));
}

/** Verdicts of every ordered pair over grid indices [lo, hi] (the rule of verdict.ts). */
export function comparePairs(fam: FamilySpec, grid: Float64Array, curves: Curve[], lo: number,
                             hi: number, ctx?: RuleContext,
                             centred?: Float64Array[][] | null): PairResult[] {
  const theta = grid.subarray(lo, hi + 1);
  const rule = ctx ?? { n: curves.map(() => NaN), scales: null, caps: null, ci: 0.95, minShare: MIN_SHARE };
  const unit = fam.margin_unit ?? "relative";
  const margin = fam.margin ?? MARGIN;
  const axis = fam.parameter === null ? "none" : fam.axis;
  const cut = (x: Float64Array) => x.subarray(lo, hi + 1);
  // Step 8: each set's sd over this domain, under compare's z for the full grid (z is a
  // maximum over points, so on fewer points it is valid, conservatively; verdict.ts).
  const z = fam.finding_z ?? null;
  const sds = centred && z !== null ? centred.map((reps) => replicateSd(reps.map(cut), hi - lo + 1))
    : null;
  const out: PairResult[] = [];
  const bands = new Map<number, [Float64Array, Float64Array]>();
  for (let a = 0; a < curves.length; a++) {
    for (let b = 0; b < curves.length; b++) {
      if (a === b) continue;
      const va = curves[a].values.subarray(lo, hi + 1);
      const vb = curves[b].values.subarray(lo, hi + 1);
      const nPair = Math.min(rule.n[a], rule.n[b]);
      const m = margins(va, vb, unit, margin, Number.isFinite(nPair) ? nPair : 0);
      const ba = curves[a].bounds;
      const bb = curves[b].bounds;
      let s = signs(va, vb);
      let da: Float64Array = va;
      let db: Float64Array = vb;
      let reading: { verdict: BoundedVerdict; lead: number; share: number };
      let plain: BoundedVerdict;
      if (ba && bb) { // step 7: only where the bounds separate
        const [la, ha, lb, hb] = [cut(ba[0]), cut(ba[1]), cut(bb[0]), cut(bb[1])];
        const separated = separationSigns(la, ha, lb, hb);
        s = separated.s;
        da = separated.gap;
        db = new Float64Array(da.length);
        reading = boundsVerdict(theta, va, vb, [la, ha], [lb, hb], m, axis, fam.step, rule.minShare, unit);
        plain = boundsVerdict(theta, va, vb, [la, ha], [lb, hb], tieTolerance(va, vb), axis, fam.step,
          0, unit).verdict;
      } else {
        reading = marginVerdict(theta, va, vb, s, m, axis, fam.step, rule.minShare, unit);
        plain = verdictOf(s);
      }
      // Bracketed values (large-n, Circles past its exact solver): the band widens by
      // each bracket (step 8).
      const [below, above] = ba && bb
        ? bracketReach(va, vb, [cut(ba[0]), cut(ba[1])], [cut(bb[0]), cut(bb[1])])
        : [new Float64Array(va.length), new Float64Array(va.length)];
      let confident: PairResult["confident"] = "no band";
      if (centred) {
        // The band of b − a is that of a − b negated (c, the bias and d change sign, the
        // sd and z do not; IEEE negation is exact): each unordered pair is banded once.
        const mirror = bands.get(b * curves.length + a);
        const [lower, upper] = mirror ? [mirror[1].map((x) => -x), mirror[0].map((x) => -x)]
          : bandOfDifference(va, vb, centred[a].map((r) => r.subarray(lo, hi + 1)),
            centred[b].map((r) => r.subarray(lo, hi + 1)), rule.ci, true);
        if (!mirror) bands.set(a * curves.length + b, [lower, upper]);
        confident = confidentVerdict(theta, lower.map((x, k) => x - below[k]),
          upper.map((x, k) => x + above[k]), m, axis, fam.step, rule.minShare);
      }
      let found: Finding = NO_UNCERTAINTY;
      const needed = { nNeeded: NaN, neededAt: NaN, leadAt: NaN, noiseAt: NaN, leadSide: NaN };
      let part: { side: number; parts: [number, number][] } = { side: NaN, parts: [] };
      if (sds && z !== null) { // step 8, as compare does it
        const d = va.map((x, k) => (x === vb[k] ? 0 : x - vb[k]));
        const reach = below.map((x, k) => Math.max(x, above[k]));
        const noise = combinedSd(sds[a], sds[b]);
        found = finding(theta, d, noise, z, m, axis, fam.step, rule.minShare, reach);
        if (found === NOT_DISTINGUISHABLE && fam.parameter !== null) { // step 9, as compare does
          part = findingParts(theta, d, noise, z, m, axis, fam.step, rule.minShare, reach);
        }
        const sd = ba && bb ? widenedSd(noise, reach, z) : noise; // what the need estimate sees
        // Where the large-n brackets alone leave the pair open, no sample size resolves it.
        const bracketBound = Boolean(ba && bb) && finding(theta, d,
          noise.map((x) => (Number.isFinite(x) ? 0 : x)), z, m, axis, fam.step, rule.minShare,
          reach) === NOT_DISTINGUISHABLE;
        if (found === NOT_DISTINGUISHABLE && !bracketBound) {
          const { need, at, side } = samplesNeeded(d, sd, z, m, Number.isFinite(nPair) ? nPair : 0,
            rule.minShare);
          if (at >= 0) {
            const scale = unit === "n" ? 1 : Math.max(Math.abs(va[at]), Math.abs(vb[at]));
            Object.assign(needed, { nNeeded: need, neededAt: theta[at],
              leadAt: scale > 0 ? d[at] / scale : NaN, noiseAt: scale > 0 ? z * sd[at] / scale : NaN,
              leadSide: side });
          }
        }
      }
      out.push({
        a, b, verdict: reading.verdict, plain, lead: reading.lead,
        minorShare: reading.share, confident, finding: found, ...needed,
        partSide: part.parts.length ? part.side : NaN, parts: part.parts,
        crossings: reading.verdict === "crosses" ? crossings(theta, da, db, s, axis, fam.step) : [],
        share: fam.parameter === null ? (s[0] > 0 ? 1 : 0) : shareAhead(theta, da, db, s, axis, fam.step),
      });
    }
  }
  return out;
}

/** One family's reading of the pair (a, b), in the summariser's terms (wording.ts). */
export function readingOf(fam: FamilySpec, pair: PairResult): Reading {
  return {
    family: fam.long_name, verdict: pair.verdict, symbol: symbolOf(fam),
    scale_free: fam.parameter === null, unit: fam.margin_unit ?? "relative",
    crossings: pair.crossings, lead: pair.lead, share: pair.minorShare,
    confident: pair.confident, finding: pair.finding, n_needed: pair.nNeeded,
    needed_at: pair.neededAt, lead_at: pair.leadAt, noise_at: pair.noiseAt,
    lead_side: pair.leadSide, part_side: pair.partSide, parts: pair.parts,
  };
}

/** Why a family has no uncertainty, as the summary says it (summary.py's _finding_lines). */
export const uncertaintyReason = (fam: FamilySpec): string =>
  (fam.uncertainty ?? "").replace(/^none: /, "") || "no replicates";
