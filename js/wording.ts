// The plain-language wording of verdicts, ported line for line from
// src/diversity_profiles/wording.py (the one summariser) and tested against fixtures that
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

export function ruleLines(margins: [string, number, string][], minShare: number,
                          noBand: boolean, bounded: [string, string][] = []): string[] {
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
  if (noBand) {
    lines.push("No verdict here holds with confidence: the profiles have no replicates " +
      "(profile with n_boot > 0 for bands).");
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

export function confidenceLine(a: string, b: string, readings: Reading[], ci: number,
                               simultaneous: boolean): string | null {
  const held = readings.filter((r) => r.confident !== "no band")
    .map((r) => `${r.family}: ${r.confident}`);
  if (!held.length) return null;
  const over = simultaneous ? "over each whole domain" : "pointwise";
  return `with ${percent(ci)} confidence ${over} (${a} vs ${b}): ${held.join(", ")}`;
}

export function pairBlock(a: string, b: string, readings: Reading[], ci: number,
                          simultaneous = true): string[] {
  const lines = [`- ${pairLine(a, b, readings)}`];
  const note = marginNote(a, b, readings);
  if (note) lines.push(`  - ${note}`);
  const sure = confidenceLine(a, b, readings, ci, simultaneous);
  if (sure) lines.push(`  - ${sure}`);
  return lines;
}
