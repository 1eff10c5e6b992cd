// The synced traits of diversity_profiles.explorer.ProfileExplorer, mirrored.
import type { Axis, MarginUnit } from "./verdict";

export interface FamilySpec {
  name: string;
  parameter: string | null;
  axis: Axis;
  step: boolean;
  long_name: string;
  n: number; // grid points
  grid: number; // offsets into the curves buffer, in float64 elements
  values: number; // (set, grid) row-major
  lower: number | null; // band, if any (bootstrap or certified bounds)
  upper: number | null;
  margin_unit?: MarginUnit; // the verdict rule's margin (verdict.ts, step 5)
  margin?: number;
  boot?: number | null; // replicates (set, replicate, grid) row-major, if any
  n_boot?: number;
}

export interface ExplorerSpec {
  condition: string;
  representation: string;
  distance: string;
  sets: string[];
  families: FamilySpec[];
  n_samples?: (number | null)[]; // the n each set's estimates stand for (common_n if used)
  subsample_size?: number[] | null; // m of the half-sample replicates, if any
  ci?: number | null;
  min_share?: number;
}

export interface Traits {
  spec: ExplorerSpec;
  curves: DataView;
  domains: Record<string, [number, number]>;
  selected_sets: string[];
  condition: string;
  conditions: string[];
  extend_request: { family: string; side: "low" | "high"; nonce: number };
  status: string;
}

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
    curves.push({ values: row(fam.values, k)!, lower: row(fam.lower, k), upper: row(fam.upper, k),
      boot: boot(k) });
  }
  return { grid, curves };
}
