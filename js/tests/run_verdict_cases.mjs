// Applies the browser's verdict rule to cases that Python wrote, and prints the
// results as JSON for tests/test_verdict_js.py to compare with verdict.py.
// Usage: node run_verdict_cases.mjs <compiled verdict.mjs> <cases.json>
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const [modulePath, casesPath] = process.argv.slice(2);
const rule = await import(pathToFileURL(modulePath).href);
// JSON has no infinities: Python writes them as strings.
const revive = (x) => (x === "inf" ? Infinity : x === "-inf" ? -Infinity : x === "nan" ? NaN : x);
const arr = (xs) => Float64Array.from(xs.map(revive));
const out = JSON.parse(readFileSync(casesPath, "utf8")).map((c) => {
  const theta = arr(c.theta);
  const a = arr(c.a);
  const b = arr(c.b);
  const s = rule.signs(a, b);
  const result = {
    signs: Array.from(s),
    verdict: rule.verdictOf(s),
    crossings: rule.crossings(theta, a, b, s, c.axis, c.step),
    share: rule.shareAhead(theta, a, b, s, c.axis, c.step),
  };
  const m = rule.margins(a, b, c.unit, c.margin, c.n);
  const reading = rule.marginVerdict(theta, a, b, s, m, c.axis, c.step, c.min_share, c.unit);
  Object.assign(result, { margins: Array.from(m), margin_verdict: reading.verdict,
    lead: [reading.lead], minor_share: [reading.share] });
  const point = rule.boundsVerdict(theta, a, b, [a, a], [b, b], m, c.axis, c.step, c.min_share, c.unit);
  result.point_bounds = { verdict: point.verdict, lead: [point.lead], minor_share: [point.share] };
  if (c.lo_a) {
    const ba = [arr(c.lo_a), arr(c.hi_a)];
    const bb = [arr(c.lo_b), arr(c.hi_b)];
    const r = rule.boundsVerdict(theta, a, b, ba, bb, m, c.axis, c.step, c.min_share, c.unit);
    const plain = rule.boundsVerdict(theta, a, b, ba, bb, rule.tieTolerance(a, b), c.axis, c.step, 0,
      c.unit);
    const { s: sep, gap } = rule.separationSigns(ba[0], ba[1], bb[0], bb[1]);
    const zero = new Float64Array(gap.length);
    result.bounded = {
      separation: Array.from(sep), gap: Array.from(gap), verdict: r.verdict, plain: plain.verdict,
      lead: [r.lead], minor_share: [r.share], share: rule.shareAhead(theta, gap, zero, sep, c.axis, c.step),
      crossings: r.verdict === "crosses" ? rule.crossings(theta, gap, zero, sep, c.axis, c.step) : [],
    };
  }
  if (c.boot_a) {
    const ca = rule.centredReplicates(c.boot_a.map(arr), a, c.scale_a, c.cap);
    const cb = rule.centredReplicates(c.boot_b.map(arr), b, c.scale_b, c.cap);
    for (const [band, simultaneous] of [["pointwise", false], ["simultaneous", true]]) {
      const [lower, upper] = rule.bandOfDifference(a, b, ca, cb, c.ci, simultaneous);
      result[band] = [Array.from(lower), Array.from(upper)];
      result[`confident_${band}`] = rule.confidentVerdict(theta, lower, upper, m, c.axis, c.step,
        c.min_share);
    }
    // Step 8 as the explorer applies it (panel.ts): each set's sd, then the difference's.
    const sdA = rule.replicateSd(ca, a.length);
    const sdB = rule.replicateSd(cb, b.length);
    const d = a.map((x, k) => (x === b[k] ? 0 : x - b[k]));
    const sd = rule.combinedSd(sdA, sdB);
    const needed = rule.samplesNeeded(d, sd, c.z, m, c.n, c.min_share);
    Object.assign(result, {
      sd_a: Array.from(sdA), sd_b: Array.from(sdB),
      finding: rule.finding(theta, d, sd, c.z, m, c.axis, c.step, c.min_share),
      n_needed: [needed.need], needed_at: needed.at, lead_side: [needed.side],
    });
    const parts = rule.findingParts(theta, d, sd, c.z, m, c.axis, c.step, c.min_share);
    result.parts = { side: [parts.side], runs: parts.parts };
    if (c.lo_a) { // large-n values with bands, as pairs.ts widens them
      const [below, above] = rule.bracketReach(a, b, [arr(c.lo_a), arr(c.hi_a)], [arr(c.lo_b), arr(c.hi_b)]);
      const reach = below.map((x, k) => Math.max(x, above[k]));
      result.bounded_finding = {
        below: Array.from(below), above: Array.from(above),
        sd: Array.from(rule.widenedSd(sd, reach, c.z)),
        finding: rule.finding(theta, d, sd, c.z, m, c.axis, c.step, c.min_share, reach),
      };
      const parts = rule.findingParts(theta, d, sd, c.z, m, c.axis, c.step, c.min_share, reach);
      result.bounded_finding.parts = { side: [parts.side], runs: parts.parts };
    }
  }
  return result;
});
// ...and the answers go back the same way.
const encode = (key, x) =>
  typeof x === "number" && !Number.isFinite(x) ? (Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf") : x;
process.stdout.write(JSON.stringify(out, encode));
