// Domains as they travel between the view and Python: JSON has no ±∞ (JSON.stringify turns
// Infinity into null), so an infinite bound (Vendi's q = ∞) is the string "inf" or "-inf".
// Python's ProfileExplorer reads and writes the same encoding (display/_explorer.py).
import type { Domain } from "./traits";

type Bound = Domain[0];

/** A bound as synced: the number, or "inf" / "-inf" where it is infinite. */
export function encodeBound(x: number): Bound {
  return Number.isFinite(x) ? x : x > 0 ? "inf" : "-inf";
}

/** A synced bound as a number (null, from an older view, reads as no bound: NaN). */
export function decodeBound(x: Bound | null): number {
  if (x === "inf") return Infinity;
  if (x === "-inf") return -Infinity;
  return typeof x === "number" ? x : NaN;
}

/** [low, high] as numbers, or null when either bound cannot be read. */
export function decodeDomain(d: Domain | undefined): [number, number] | null {
  if (!d) return null;
  const [lo, hi] = [decodeBound(d[0]), decodeBound(d[1])];
  return Number.isNaN(lo) || Number.isNaN(hi) ? null : [lo, hi];
}
