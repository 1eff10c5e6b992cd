// The synced traits of diversity_profiles.explorer.ProfileExplorer: generated into
// ./traits.ts from the schema that explorer.py is tested against (one description).
import type { Axis } from "./verdict";
import type { FamilySpec, Traits } from "./traits";

export type {
  Domain, Explanation, ExplorerSpec, ExtendRequest, FamilySpec, Traits,
} from "./traits";

// tsc fails here if the schema's axes and the ones the dominance rule reads part ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type AxesAgree = Assert<Same<FamilySpec["axis"], Axis>>;

// The part of anywidget's model that the widget uses.
export interface Model {
  get<K extends keyof Traits>(key: K): Traits[K];
  set<K extends keyof Traits>(key: K, value: Traits[K]): void;
  save_changes(): void;
  on(event: string, callback: () => void): void;
  off(event: string, callback: () => void): void;
  /** False where no kernel stands behind the model (report, JupyterLab extension). */
  readonly live?: boolean;
}

/** Subscribe to a trait change; returns the unsubscribe function. */
export function bind(model: Model, key: keyof Traits, callback: () => void): () => void {
  const event = `change:${key}`;
  model.on(event, callback);
  return () => model.off(event, callback);
}

/** A family's grid and per-set curves, read from the binary buffer. */
export function readFamily(buffer: DataView, fam: FamilySpec, nSets: number) {
  const aligned = buffer.byteOffset % 8 === 0;
  const floats = aligned
    ? new Float64Array(buffer.buffer, buffer.byteOffset, buffer.byteLength / 8)
    : new Float64Array(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength));
  const grid = floats.subarray(fam.grid, fam.grid + fam.n);
  const row = (offset: number | null, k: number) =>
    offset === null ? null : floats.subarray(offset + k * fam.n, offset + (k + 1) * fam.n);
  const reps = fam.n_boot ?? 0;
  const boot = (k: number) => (fam.boot === null || fam.boot === undefined || !reps ? null
    : Array.from({ length: reps }, (_, r) =>
      floats.subarray(fam.boot! + (k * reps + r) * fam.n, fam.boot! + (k * reps + r + 1) * fam.n)));
  const curves = [];
  for (let k = 0; k < nSets; k++) {
    const lo = row(fam.bounds_lower ?? null, k);
    const hi = row(fam.bounds_upper ?? null, k);
    curves.push({ values: row(fam.values, k)!, lower: row(fam.lower, k), upper: row(fam.upper, k),
      boot: boot(k), bounds: lo && hi ? [lo, hi] as [Float64Array, Float64Array] : null });
  }
  // dp.permutation_test's chance envelopes, one (pair, grid) row per unordered pair.
  const env = fam.envelope ?? null;
  const envelope: PairEnvelope[] = env === null ? [] : env.pairs.map(([a, b], k) => ({
    a, b, band: row(env.offset, k)!, pHolm: env.p_holm[k] ?? null }));
  return { grid, curves, envelope };
}

/** The chance envelope of one unordered pair of sets (a < b) and its Holm p-value. */
export interface PairEnvelope {
  a: number; b: number;
  band: Float64Array; // per grid point: |A − B| that relabelling alone reaches (the level)
  pHolm: number | null;
}
