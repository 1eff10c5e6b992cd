// The explorer without a kernel: a model held in the page, built from the JSON payload
// that every explorer display also carries (MIME type below) and that reports embed.
// Python writes the payload (diversity_profiles.explorer.standalone_payload); the
// JupyterLab extension and the HTML report read it here, so both draw with the same code
// as the widget.
import { render } from "./explorer";
import type { Explanation, ExplorerSpec, Model, Traits } from "./model";

// Python's MIME type (display/_constants.py), generated; the JupyterLab extension reads it here.
export { MIME_TYPE } from "./constants";

export interface StandalonePayload {
  version: 1;
  condition: string; // the condition shown first
  // curves: base64 float64 LE; explanation: what dp.explain stored ({} or absent if nothing)
  conditions: Record<string, {
    spec: ExplorerSpec; curves: string; explanation?: Explanation | Record<string, never>;
  }>;
  domains?: Record<string, [number, number]>;
  selected_sets?: string[];
}

function decode(base64: string): DataView {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new DataView(bytes.buffer);
}

/** A model with the widget's traits, kept in the page; choosing a condition swaps curves. */
export function standaloneModel(payload: StandalonePayload): Model {
  if (payload?.version !== 1 || !payload.conditions?.[payload.condition]) {
    throw new Error(
      `diversity-profiles: this output was written by a version this viewer does not read ` +
        `(payload version ${payload?.version}); reinstall diversity-profiles to match.`,
    );
  }
  const first = payload.conditions[payload.condition];
  const state: Traits = {
    spec: first.spec,
    curves: decode(first.curves),
    domains: payload.domains ?? {},
    selected_sets: payload.selected_sets ?? [],
    condition: payload.condition,
    conditions: Object.keys(payload.conditions),
    extend_request: {},
    explain_request: {},
    status: "",
    explanation: first.explanation ?? {},
  };
  const handlers = new Map<string, (() => void)[]>();
  const emit = (key: string) => (handlers.get(`change:${key}`) ?? []).forEach((f) => f());
  const model: Model = {
    get: (key) => state[key],
    set: (key, value) => {
      state[key] = value;
      if (key === "condition") {
        // What ProfileExplorer does in Python: new curves, domains reset.
        const chosen = payload.conditions[state.condition];
        state.spec = chosen.spec;
        state.curves = decode(chosen.curves);
        state.domains = {};
        state.explanation = chosen.explanation ?? {};
        emit("explanation");
        emit("spec");
      }
      emit(key);
    },
    save_changes: () => {},
    on: (event, f) => handlers.set(event, [...(handlers.get(event) ?? []), f]),
    off: (event, f) => handlers.set(event, (handlers.get(event) ?? []).filter((g) => g !== f)),
    live: false,
  };
  return model;
}

/** Draw the explorer from a payload into ``el``; returns the cleanup function. */
export function mountStandalone(el: HTMLElement, payload: StandalonePayload): () => void {
  return render({ model: standaloneModel(payload), el });
}
