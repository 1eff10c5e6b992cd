// Words the cases that Python wrote with the browser's summariser (js/wording.ts) and prints
// the lines as JSON for tests/test_wording_js.py to compare with wording.py.
// Usage: node run_wording_cases.mjs <compiled wording.mjs> <cases.json>
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

// With "headline" as a third argument the cases are conditions, worded by headlineLines.
const [modulePath, casesPath, kind] = process.argv.slice(2);
const w = await import(pathToFileURL(modulePath).href);
const revive = (x) => (x === "inf" ? Infinity : x === "-inf" ? -Infinity : x === "nan" ? NaN : x);
const reviveAll = (readings) => readings.map((r) => ({ ...r, lead: revive(r.lead),
  n_needed: revive(r.n_needed), needed_at: revive(r.needed_at), lead_at: revive(r.lead_at),
  noise_at: revive(r.noise_at), lead_side: revive(r.lead_side), crossings: r.crossings.map(revive),
  part_side: revive(r.part_side), parts: r.parts.map(([lo, hi]) => [revive(lo), revive(hi)]) }));
const cases = JSON.parse(readFileSync(casesPath, "utf8"));
if (kind === "headline") {
  process.stdout.write(JSON.stringify(cases.map((c) => w.headlineLines(c.labels, c.families,
    c.pairs.map(([i, j, r]) => [i, j, reviveAll(r)]), c.markdown))));
  process.exit(0);
}
const out = cases.map((c) => {
  const readings = reviveAll(c.readings);
  return {
    intro: w.findingIntro(c.level, c.without, c.banded),
    rules: w.ruleLines(c.margins, c.min_share, c.bounded),
    block: w.pairBlock(c.a, c.b, readings),
    numbers: c.numbers.map((x) => [w.fmtG(revive(x), 3), w.fmtG(revive(x), 6), Number.isFinite(revive(x)) ? w.percent(revive(x)) : null]),
  };
});
process.stdout.write(JSON.stringify(out));
