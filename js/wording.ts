// The plain-language wording of verdicts, ported line for line from
// src/diversity_profiles/comparison/_wording.py (the one summariser) and tested against fixtures that
// Python generates (tests/test_wording_js.py). Labels are written with textContent by the
// callers, so nothing here escapes.

export interface Reading {
  family: string;
  verdict: "dominates" | "dominated" | "crosses" | "tied" | "bounds overlap";
  symbol: string; // how its parameter is written; "" when scale-free
  scale_free: boolean;
  unit: "n" | "relative";
  crossings: number[];
  lead: number; // NaN: nothing dismissed
  share: number;
  confident: string; // "no band" without replicates
  /** What the samples support (verdict rule step 8): a verdict, "not distinguishable" or
   *  "no uncertainty" */
  finding: string;
  n_needed: number; // samples per set that would resolve a lead not yet supported (NaN: none)
  needed_at: number; // ...read at this parameter
  lead_at: number; // a - b there (samples, or relative)
  noise_at: number; // the family-wise band's half-width there
  /** +1 when a is the side that leads, -1 when b is (NaN or absent: the sign of lead_at) */
  lead_side?: number;
}

/** Python's ``f"{x:.{digits}g}"``, with ∞ for infinities. */
export function fmtG(x: number, digits = 3): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "-∞";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const [mantissa, e] = x.toExponential(digits - 1).split("e");
  const exp = Number(e);
  const strip = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (exp < -4 || exp >= digits) {
    const sign = exp < 0 ? "-" : "+";
    return `${strip(mantissa)}e${sign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return strip(x.toFixed(Math.max(digits - 1 - exp, 0)));
}

/** Python's ``f"{x:.0%}"`` (ties to even, like Python's correctly rounded formatting). */
export function percent(x: number): string {
  const v = x * 100;
  const floor = Math.floor(v);
  const rounded = v - floor === 0.5 ? (floor % 2 === 0 ? floor : floor + 1) : Math.round(v);
  return `${rounded}%`;
}

/** How far the dismissed side led: "≤ 1 sample" or "≤ 0.4%". */
export function amount(lead: number, unit: string): string {
  if (unit === "n") return `≤ ${fmtG(lead)} sample${lead === 1 ? "" : "s"}`;
  const pct = lead * 100;
  return pct < 0.01 ? "< 0.01%" : `≤ ${fmtG(Number(fmtG(pct, 2)), 6)}%`;
}

export type Agreement = "tied" | "a_ahead" | "b_ahead" | "mixed" | "bounds overlap";

/** The families' reading of one pair together ("bounds overlap": the families the bounds
 * can order agree, but some cannot be ordered). */
export function agreement(verdicts: string[]): Agreement {
  const kinds = new Set(verdicts);
  if (kinds.has("bounds overlap")) {
    const decided = agreement(verdicts.filter((v) => v !== "bounds overlap"));
    return decided === "mixed" ? "mixed" : "bounds overlap";
  }
  const within = (allowed: string[]) => [...kinds].every((k) => allowed.includes(k));
  if (within(["tied"])) return "tied";
  if (within(["dominates", "tied"])) return "a_ahead";
  if (within(["dominated", "tied"])) return "b_ahead";
  return "mixed";
}

/** How verdicts were read: each family's (name, margin, unit), and the (name, method) of
 *  families whose values are large-n bounds or estimates. */
export function ruleLines(margins: [string, number, string][], minShare: number,
                          bounded: [string, string][] = []): string[] {
  const parts = margins.map(([name, margin, unit]) =>
    `${name} ${fmtG(margin, 6)}${unit === "n" ? " × n samples" : " relative"}`);
  const lines = [
    `Margins (leads within them, or on less than ${percent(minShare)} of the domain, ` +
    `are negligible): ${parts.join(", ")}.`,
  ];
  if (bounded.length) {
    const methods = new Map<string, string[]>();
    for (const [name, method] of bounded) {
      if (!methods.has(method)) methods.set(method, []);
      methods.get(method)!.push(name);
    }
    const kinds = [...methods].map(([method, names]) => `${method}: ${names.join(", ")}`).join("; ");
    lines.push(`Large-n values (${kinds}): a verdict there holds only where the bounds ` +
      "separate; elsewhere it says the bounds overlap.");
  }
  return lines;
}

function crossingText(a: string, b: string, r: Reading): string {
  const where = r.crossings.filter((x) => !Number.isNaN(x))
    .map((x) => `${r.symbol} ≈ ${fmtG(x)}`).join(", ");
  return `${a} and ${b} cross in ${r.family} at ${where}`;
}

export function pairLine(a: string, b: string, readings: Reading[]): string {
  const tied = readings.filter((r) => r.verdict === "tied").map((r) => r.family);
  const tail = tied.length ? ` (tied in ${tied.join(", ")})` : "";
  const scope = tied.length ? "every family where they differ" : "every family";
  const together = agreement(readings.map((r) => r.verdict));
  if (together === "tied") return `${a} and ${b} are tied in every family`;
  if (together === "a_ahead") return `${a} ≻ ${b} on ${scope}${tail}`;
  if (together === "b_ahead") return `${b} ≻ ${a} on ${scope}${tail}`;
  const overlap = readings.filter((r) => r.verdict === "bounds overlap").map((r) => r.family);
  const parts: string[] = overlap.length ? [`bounds overlap in ${overlap.join(", ")}`] : [];
  const ahead = readings.filter((r) => r.verdict === "dominates").map((r) => r.family);
  const behind = readings.filter((r) => r.verdict === "dominated").map((r) => r.family);
  if (ahead.length) parts.push(`${a} ≻ ${b} in ${ahead.join(", ")}`);
  if (behind.length) parts.push(`${b} ≻ ${a} in ${behind.join(", ")}`);
  for (const r of readings) if (r.verdict === "crosses") parts.push(crossingText(a, b, r));
  if (tied.length) parts.push(`tied in ${tied.join(", ")}`);
  if (together === "bounds overlap") return `${a} vs ${b}: ${parts.join("; ")}`;
  return `families disagree on ${a} vs ${b}: ${parts.join("; ")}`;
}

export function marginNote(a: string, b: string, readings: Reading[]): string | null {
  const notes: string[] = [];
  for (const r of readings) {
    if ((r.verdict !== "dominates" && r.verdict !== "dominated") || !Number.isFinite(r.lead)) continue;
    const loser = r.verdict === "dominates" ? b : a;
    let where = r.scale_free ? "" : ` on ${percent(r.share)} of the domain`;
    if (!r.scale_free && r.share > 0 && r.share < 0.005) where = " on < 1% of the domain";
    notes.push(`${loser} ahead by ${amount(r.lead, r.unit)}${where} in ${r.family}`);
  }
  return notes.length ? `within the margin: ${notes.join("; ")}` : null;
}

const CLAIMS = ["dominates", "dominated", "crosses"];

/** Python's ``sorted`` of strings: by code point (not by UTF-16 unit, as JS's sort). */
function byCodePoint(x: string, y: string): number {
  const a = [...x];
  const b = [...y];
  for (let k = 0; k < Math.min(a.length, b.length); k++) {
    const d = a[k].codePointAt(0)! - b[k].codePointAt(0)!;
    if (d) return d;
  }
  return a.length - b.length;
}

/** The first lines of a condition: what its findings hold with, or that none is
 *  supported; ``without`` lists (family, why) for families with no uncertainty. */
export function findingIntro(level: number, without: [string, string][], banded: number): string[] {
  if (banded === 0) {
    const why = [...new Set(without.map(([, how]) => how))].sort(byCodePoint).join("; ") ||
      "no replicates";
    // The default's own reasons say what to change; only a switched-off one needs this.
    const advice = why.includes("n_boot=0") ? "; profile with n_boot='auto' (the default) for findings" : "";
    return [
      "**No verdict is supported**: these profiles carry no sampling uncertainty " +
        `(${why}). The verdicts below describe these samples only, not the sources ` +
        `they were drawn from${advice}.`,
    ];
  }
  const lines = [
    `Findings hold with ${percent(level)} confidence for every pair, point and family ` +
      "at once; any other difference is not distinguishable at this sample size.",
  ];
  for (const [name, how] of without) {
    lines.push(`No finding in ${name}: no sampling uncertainty (${how}).`);
  }
  return lines;
}

function claimText(a: string, b: string, r: Reading): string {
  if (r.finding === "crosses") {
    const where = r.crossings.filter((x) => !Number.isNaN(x))
      .map((x) => `${r.symbol} ≈ ${fmtG(x)}`).join(", ");
    return `${a} and ${b} cross in ${r.family}` + (where ? ` at ${where}` : "");
  }
  const [first, second] = r.finding === "dominates" ? [a, b] : [b, a];
  return `${first} ≻ ${second} in ${r.family}`;
}

/** The one line that says what the samples support about a and b. */
export function findingLine(a: string, b: string, readings: Reading[]): string {
  const claims = readings.filter((r) => CLAIMS.includes(r.finding));
  const tied = readings.filter((r) => r.finding === "tied").map((r) => r.family);
  const open = readings.filter((r) => r.finding === "not distinguishable").map((r) => r.family);
  const ahead = claims.filter((r) => r.finding === "dominates").map((r) => r.family);
  const behind = claims.filter((r) => r.finding === "dominated").map((r) => r.family);
  const crossed = claims.filter((r) => r.finding === "crosses");
  const parts: string[] = [];
  if (claims.length) {
    if (ahead.length) parts.push(`${a} ≻ ${b} in ${ahead.join(", ")}`);
    if (behind.length) parts.push(`${b} ≻ ${a} in ${behind.join(", ")}`);
    for (const r of crossed) parts.push(claimText(a, b, r));
    if (open.length) parts.push(`not distinguishable in ${open.join(", ")}`);
  } else if (open.length) {
    parts.push(`${a} and ${b} are not distinguishable at this sample size`);
  }
  if (tied.length) parts.push(`equal within the margin in ${tied.join(", ")}`);
  if (!parts.length) return `no finding on ${a} vs ${b}: no sampling uncertainty`;
  const disagree = [ahead, behind, crossed].filter((x) => x.length).length > 1;
  return (disagree ? `families disagree on ${a} vs ${b}: ` : "") + parts.join("; ");
}

/** A lead or noise as "2.1%" or "3 samples" (its sign dropped). */
export function amountAt(x: number, unit: string): string {
  const v = Math.abs(x);
  if (unit === "n") return `${fmtG(v)} sample${v === 1 ? "" : "s"}`;
  return `${fmtG(Number(fmtG(v * 100, 2)), 6)}%`; // two digits, never "1e+02%"
}

/** Python's ``f"{int(x):,}"``: the integer part, with thousands separated by commas. */
function grouped(x: number): string {
  const digits = BigInt(Math.trunc(x)).toString();
  const sign = digits.startsWith("-") ? "-" : "";
  return sign + digits.slice(sign.length).replace(/\B(?=(\d{3})+$)/g, ",");
}

/** For leads not yet supported: how big they are, the noise, and about how many samples
 *  per set would resolve them if they are real. */
export function neededNote(a: string, b: string, readings: Reading[]): string | null {
  const notes: string[] = [];
  for (const r of readings) {
    if (r.finding !== "not distinguishable" || !Number.isFinite(r.n_needed)) continue;
    const side = Number.isFinite(r.lead_side ?? NaN) ? (r.lead_side as number) : r.lead_at > 0 ? 1 : -1;
    const [leader, other] = side > 0 ? [a, b] : [b, a];
    const where = r.scale_free ? "" : ` at ${r.symbol} ≈ ${fmtG(r.needed_at)}`;
    // The need is read where it binds, which can be where the leader is level or behind.
    const gap = side * r.lead_at > 0 ? `${leader} leads by ${amountAt(r.lead_at, r.unit)}${where}`
      : r.lead_at === 0 ? `${leader} leads elsewhere; level${where}`
      : `${leader} leads elsewhere; ${other} ahead by ${amountAt(r.lead_at, r.unit)}${where}`;
    notes.push(`${r.family}: ${gap} (noise ±${amountAt(r.noise_at, r.unit)}); about ` +
      `${grouped(r.n_needed)} samples per set would resolve it`);
  }
  return notes.length ? `not yet supported — ${notes.join("; ")}` : null;
}

/** The Markdown list item of one pair: what the samples support, then the notes under it
 *  (leads not yet supported, and these samples' point verdicts). */
export function pairBlock(a: string, b: string, readings: Reading[]): string[] {
  const lines = [`- ${findingLine(a, b, readings)}`];
  const need = neededNote(a, b, readings);
  if (need) lines.push(`  - ${need}`);
  lines.push(`  - these samples (no confidence): ${pairLine(a, b, readings)}`);
  const note = marginNote(a, b, readings);
  if (note) lines.push(`  - ${note}`);
  return lines;
}
