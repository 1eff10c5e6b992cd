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
  /** Step 9, for a pair not distinguishable over the whole domain: +1 when a is confidently
   *  ahead on part of it, -1 when b is (NaN or absent: neither), and those parts as
   *  [first, last] parameters of each run of grid points */
  part_side?: number;
  parts?: [number, number][];
}

/** Whether a pair not distinguishable over the whole domain is ordered on part of it. */
export const hasPart = (r: Reading): boolean => r.finding === "not distinguishable" &&
  Number.isFinite(r.part_side ?? NaN) && (r.parts ?? []).length > 0;

/** One run of a partial finding: "q ≥ 0.1", "0.1 ≤ q ≤ 2", "q ≤ 2" or "q ≈ 0.5". */
export function spanText(symbol: string, lo: number, hi: number): string {
  if (lo === hi) return `${symbol} ≈ ${fmtG(lo)}`;
  if (hi === Infinity) return `${symbol} ≥ ${fmtG(lo)}`;
  if (lo === 0) return `${symbol} ≤ ${fmtG(hi)}`;
  return `${fmtG(lo)} ≤ ${symbol} ≤ ${fmtG(hi)}`;
}

/** A partial finding of more runs is written as their extent: "on 5 parts of 0.7 ≤ τ ≤ 0.9". */
export const LISTED_PARTS = 2;

/** Where a partial finding holds: "for" its runs, joined by "and", or "on n parts of" their
 *  extent when there are more than LISTED_PARTS. */
export function partsText(r: Reading): string {
  const parts = r.parts ?? [];
  if (parts.length > LISTED_PARTS) {
    return `on ${parts.length} parts of ${spanText(r.symbol, parts[0][0], parts[parts.length - 1][1])}`;
  }
  return "for " + parts.map(([lo, hi]) => spanText(r.symbol, lo, hi)).join(" and ");
}

/** "a ≻ b for q ≥ 0.1" (with family: "a ≻ b in Vendi score for q ≥ 0.1"). */
export function partClaim(a: string, b: string, r: Reading, family = false): string {
  const [first, second] = (r.part_side as number) > 0 ? [a, b] : [b, a];
  return `${first} ≻ ${second}${family ? ` in ${r.family}` : ""} ${partsText(r)}`;
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
    lines.push(`Values known within bounds (${kinds}): a verdict there holds only where the bounds ` +
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
  const partial = readings.filter(hasPart);
  const tied = readings.filter((r) => r.finding === "tied").map((r) => r.family);
  const open = readings.filter((r) => r.finding === "not distinguishable" && !hasPart(r))
    .map((r) => r.family);
  const ahead = claims.filter((r) => r.finding === "dominates").map((r) => r.family);
  const behind = claims.filter((r) => r.finding === "dominated").map((r) => r.family);
  const crossed = claims.filter((r) => r.finding === "crosses");
  const parts: string[] = [];
  if (claims.length || partial.length) {
    if (ahead.length) parts.push(`${a} ≻ ${b} in ${ahead.join(", ")}`);
    if (behind.length) parts.push(`${b} ≻ ${a} in ${behind.join(", ")}`);
    for (const r of crossed) parts.push(claimText(a, b, r));
    for (const r of partial) parts.push(`${partClaim(a, b, r, true)} (not distinguishable elsewhere)`);
    if (open.length) parts.push(`not distinguishable in ${open.join(", ")}`);
  } else if (open.length) {
    parts.push(`${a} and ${b} are not distinguishable at this sample size`);
  }
  if (tied.length) parts.push(`equal within the margin in ${tied.join(", ")}`);
  if (!parts.length) return `no finding on ${a} vs ${b}: no sampling uncertainty`;
  const aSide = ahead.length ? ahead : partial.filter((r) => (r.part_side as number) > 0);
  const bSide = behind.length ? behind : partial.filter((r) => (r.part_side as number) < 0);
  const disagree = [aSide, bSide, crossed].filter((x) => x.length).length > 1;
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

// The headline: one sentence per family, then the pairs that cross or are undecided. Pairs
// are given as [i, j, reading] with i < j in the sets' order; a reading is of (a=i, b=j).

/** A headline names at most this many sets of one rank (the rest are counted). */
export const RANKING_TIE_NAMES = 6;
/** A condition's table names at most this many pairs (the rest are counted). */
export const TABLE_ROWS = 12;
/** A family ordering at most this many pairs, not in layers, names each of them. */
export const LIST_ORDERED_UP_TO = 3;
export const HEADLINE_COUNTS = "(+n −m): ahead of n of the other sets, behind m.";
export const TABLE_HEAD = ["pair", "cross in", "not distinguishable in (≈ samples per set to resolve)"];
const PLAIN_HEAD = ["cross in", "not distinguishable in"];

/** What a headline reads of one family's pair: its finding where the family has sampling
 *  uncertainty, else these samples' verdict. */
export const outcome = (r: Reading, banded: boolean): string => (banded ? r.finding : r.verdict);

const where = (r: Reading) => r.crossings.filter((x) => !Number.isNaN(x))
  .map((x) => `${r.symbol} ≈ ${fmtG(x)}`).join(", ");
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function openCounts(kinds: string[]): string[] {
  const parts: string[] = [];
  for (const [kind, one, many] of [
    ["crosses", "pair crosses", "pairs cross"],
    ["not distinguishable", "pair not distinguishable", "pairs not distinguishable"],
    ["tied", "pair equal within the margin", "pairs equal within the margin"],
    ["bounds overlap", "pair with overlapping bounds", "pairs with overlapping bounds"],
  ]) {
    const n = kinds.filter((k) => k === kind).length;
    if (n) parts.push(plural(n, one, many));
  }
  return parts;
}

/** Sets of one rank: "a", "a and b", "a, b and c", or the first RANKING_TIE_NAMES and how
 *  many more. */
function names(labels: string[]): string {
  if (labels.length > RANKING_TIE_NAMES) {
    return labels.slice(0, RANKING_TIE_NAMES).join(", ") + ` and ${labels.length - RANKING_TIE_NAMES} more`;
  }
  return labels.length === 1 ? labels[0] : labels.slice(0, -1).join(", ") + " and " + labels[labels.length - 1];
}

/** One family's reading of a condition in one sentence, always from the leader's side. */
export function headlineSentence(labels: string[], pairs: [number, number, Reading][],
                                 banded: boolean): string {
  const n = labels.length;
  const wins = new Array<number>(n).fill(0);
  const losses = new Array<number>(n).fill(0);
  const kinds: string[] = [];
  let partial: string[] = []; // step 9: pairs ordered on part of the domain, named or counted
  for (const [i, j, r] of pairs) {
    let kind = outcome(r, banded);
    if (banded && hasPart(r)) {
      kind = "ordered on part";
      partial.push(partClaim(labels[i], labels[j], r));
    }
    kinds.push(kind);
    if (kind === "dominates") { wins[i]++; losses[j]++; }
    else if (kind === "dominated") { wins[j]++; losses[i]++; }
  }
  const tail = banded ? "" : " (these samples, no confidence)";
  if (pairs.length === 1) {
    const [i, j, r] = pairs[0];
    const [a, b, kind] = [labels[i], labels[j], kinds[0]];
    if (partial.length) return `${partial[0]}; not distinguishable elsewhere`;
    if (kind === "dominates" || kind === "dominated") {
      const [first, second] = kind === "dominates" ? [a, b] : [b, a];
      return `${first} ≻ ${second}${tail}`;
    }
    const said: Record<string, string> = {
      crosses: `${a} and ${b} cross` + (where(r) ? ` at ${where(r)}` : ""),
      tied: `${a} and ${b} are equal within the margin`,
      "not distinguishable": `${a} and ${b} are not distinguishable at this sample size`,
      "bounds overlap": `the bounds of ${a} and ${b} overlap`,
      "no uncertainty": `no finding on ${a} vs ${b}`,
    };
    return (said[kind] ?? `${a} vs ${b}: ${kind}`) + tail;
  }
  const order = [...Array(n).keys()].sort((x, y) => (losses[x] - wins[x]) - (losses[y] - wins[y]) || x - y);
  const counts = openCounts(kinds);
  if (partial.length > LIST_ORDERED_UP_TO) {
    partial = [plural(partial.length, "pair ordered on part of the domain",
      "pairs ordered on part of the domain")];
  }
  // "; " between the partial findings: their "0.1 ≤ q ≤ 2" reads badly in a comma list.
  const rest = [...partial, ...(counts.length ? [counts.join(", ")] : [])];
  const more = rest.length ? "; " + rest.join("; ") : "";
  if (!wins.some((w) => w > 0)) {
    if (partial.length) return rest.join("; ") + tail;
    return (counts.length ? "no set is ahead of another: " + counts.join(", ") : "no finding") + tail;
  }
  const groups: [number[], number, number][] = [];
  for (const k of order) {
    const last = groups[groups.length - 1];
    if (last && last[1] === wins[k] && last[2] === losses[k]) last[0].push(k);
    else groups.push([[k], wins[k], losses[k]]);
  }
  // Layers: each set ahead of every set in the layers below and of none in its own.
  const rank = new Map<number, number>();
  groups.forEach(([members], g) => members.forEach((k) => rank.set(k, g)));
  const below = groups.map((_, g) => groups.slice(g + 1).reduce((s, [m]) => s + m.length, 0));
  const label = (m: number[]) => names(m.map((k) => labels[k]));
  if ([...Array(n).keys()].every((k) => wins[k] === below[rank.get(k)!])) {
    return groups.map(([m]) => label(m)).join(" ≻ ") + more + tail;
  }
  const ordered = pairs.map(([i, j], k) => [i, j, kinds[k]] as const)
    .filter(([, , kind]) => kind === "dominates" || kind === "dominated");
  if (ordered.length <= LIST_ORDERED_UP_TO) { // a few leads: each one, from the leader's side
    return ordered.map(([i, j, kind]) => (kind === "dominates" ? `${labels[i]} ≻ ${labels[j]}`
      : `${labels[j]} ≻ ${labels[i]}`)).join(", ") + more + tail;
  }
  return groups.map(([m, w, l]) => `${label(m)} (+${w} −${l})`).join(", ") + more + tail;
}

/** Whether a headline writes the (+ −) counts, which its intro line then explains. */
export const usesCounts = (sentences: string[]) =>
  sentences.some((s) => s.includes(" −") && s.includes("(+"));

/** One table row: the pair, the families where they cross (and where), and those where they
 *  are not distinguishable (and the samples per set that would resolve it) or the bounds
 *  overlap; null when every family orders or ties them. */
export function openRow(a: string, b: string, families: [string, Reading, boolean][]):
    [string, string, string] | null {
  const crossed: string[] = [];
  const open: string[] = [];
  for (const [family, r, banded] of families) {
    const kind = outcome(r, banded);
    if (kind === "crosses") crossed.push(where(r) ? `${family} (${where(r)})` : family);
    else if (kind === "not distinguishable") {
      const notes = banded && hasPart(r) ? [partClaim(a, b, r)] : [];
      if (Number.isFinite(r.n_needed)) notes.push(`≈ ${grouped(r.n_needed)}`);
      // no sample size where the large-n bounds alone leave the pair open
      else if (r.verdict === "bounds overlap") notes.push("bounds overlap");
      open.push(family + (notes.length ? ` (${notes.join("; ")})` : ""));
    } else if (kind === "bounds overlap") open.push(`${family} (bounds overlap)`);
  }
  if (!crossed.length && !open.length) return null;
  return [`${a} vs ${b}`, crossed.join(", ") || "–", open.join(", ") || "–"];
}

/** The pairs that cross or are undecided, at most TABLE_ROWS of them: a Markdown table, or
 *  in plain text one line per pair. */
export function tableLines(rows: [string, string, string][], markdown: boolean): string[] {
  if (!rows.length) return [];
  const shown = rows.slice(0, TABLE_ROWS);
  const more = rows.length - TABLE_ROWS;
  const lines = markdown
    ? ["| " + TABLE_HEAD.join(" | ") + " |", "|---|---|---|", ...shown.map((r) => "| " + r.join(" | ") + " |")]
    : shown.map(([pair, ...rest]) => `${pair}: ` + rest.map((cell, k) => [PLAIN_HEAD[k], cell])
      .filter(([, cell]) => cell !== "–").map(([head, cell]) => `${head} ${cell}`).join("; "));
  if (more > 0) lines.push("", `…and ${plural(more, "more pair", "more pairs")} (each pair below).`);
  return lines;
}

/** The line before the table. */
export function tableIntro(nRows: number, nPairs: number): string {
  if (nPairs === 0) return "No pair to compare: the condition holds one set.";
  if (nPairs === 1) {
    return nRows ? "The pair crosses or is not distinguishable in some family:"
      : "Every family orders or ties the pair.";
  }
  if (nRows === 0) return `Every family orders or ties each of the ${plural(nPairs, "pair", "pairs")}.`;
  return `${nRows} of the ${plural(nPairs, "pair", "pairs")} cross or are not distinguishable in some family:`;
}

/** A condition's headline (wording.py's headline_lines). */
export function headlineLines(labels: string[], families: string[],
                              pairs: [number, number, Reading[]][], markdown: boolean): string[] {
  const banded = families.map((_, k) => pairs.some(([, , r]) => r[k].finding !== "no uncertainty"));
  const lines = families.map((name, k) => {
    const said = headlineSentence(labels, pairs.map(([i, j, r]): [number, number, Reading] => [i, j, r[k]]), banded[k]);
    return markdown ? `- **${name}**: ${said}.` : `- ${name}: ${said}.`;
  });
  if (usesCounts(lines)) lines.push("", HEADLINE_COUNTS);
  const rows = pairs.map(([i, j, r]) => openRow(labels[i], labels[j],
    r.map((x, k): [string, Reading, boolean] => [x.family, x, banded[k]])))
    .filter((row): row is [string, string, string] => row !== null);
  lines.push("", tableIntro(rows.length, pairs.length));
  if (rows.length) lines.push("", ...tableLines(rows, markdown));
  return lines;
}

/** The disclosure's title over every pair's detail. */
export const detailsTitle = (nPairs: number) => `Each pair in detail (${plural(nPairs, "pair", "pairs")})`;
