// One two-handled range control: a single track, the compared span filled between two
// handles. The handles are native range inputs laid over each other, so that each is a
// slider to assistive technology and the keyboard (Arrow keys, PageUp/PageDown, Home,
// End) works as the browser defines it; the pointer is handled on the track (the nearer
// handle follows it), so two handles at one spot never hide each other.
// Values are grid indices: what they mean (the parameter values) is the caller's.

export const RANGE_STYLE = `
.dp-range { display: flex; flex-direction: column; gap: 2px; flex: 1 1 auto; min-width: 160px; }
.dp-range .dp-range-label { font-size: 12px; color: var(--dp-fg); font-variant-numeric: tabular-nums; }
.dp-range .dp-range-track { position: relative; height: 22px; touch-action: none; cursor: pointer; }
.dp-range .dp-range-track::before { content: ""; position: absolute; left: 7px; right: 7px; top: 9px;
  height: 4px; border-radius: 2px; background: var(--dp-pressed); }
.dp-range .dp-range-fill { position: absolute; top: 9px; height: 4px; border-radius: 2px;
  background: var(--dp-focus); pointer-events: none; }
.dp-range input[type=range] { position: absolute; inset: 0; width: 100%; height: 100%; margin: 0;
  background: transparent; -webkit-appearance: none; appearance: none; pointer-events: none; }
.dp-range input[type=range]::-webkit-slider-runnable-track { background: transparent; height: 22px; }
.dp-range input[type=range]::-webkit-slider-thumb { -webkit-appearance: none; appearance: none;
  width: 14px; height: 14px; margin-top: 4px; border-radius: 50%; background: var(--dp-raised);
  border: 2px solid var(--dp-focus); box-sizing: border-box; }
.dp-range input[type=range]::-moz-range-track { background: transparent; }
.dp-range input[type=range]::-moz-range-thumb { width: 14px; height: 14px; border-radius: 50%;
  background: var(--dp-raised); border: 2px solid var(--dp-focus); box-sizing: border-box; }
.dp-range input[type=range]:focus { outline: none; }
.dp-range input[type=range]:focus-visible::-webkit-slider-thumb { background: var(--dp-focus);
  box-shadow: 0 0 0 3px color-mix(in srgb, var(--dp-focus) 40%, transparent); }
.dp-range input[type=range]:focus-visible::-moz-range-thumb { background: var(--dp-focus);
  box-shadow: 0 0 0 3px color-mix(in srgb, var(--dp-focus) 40%, transparent); }
`;

/** The thumb's width in pixels (RANGE_STYLE): its centre runs from THUMB / 2 to
 *  width − THUMB / 2, as a native range input places it. */
const THUMB = 14;

export interface RangeOptions {
  max: number; // the last grid index (the first is 0)
  /** The visible label for [lo, hi], e.g. "compare over q ∈ [0, ∞]". */
  label(lo: number, hi: number): string;
  /** The accessible name of each handle. */
  handleLabels: [string, string];
  /** A handle's value as a screen reader says it (aria-valuetext). */
  valueText(i: number): string;
  /** Called after either end moved (not when set() moved it). */
  onChange(lo: number, hi: number): void;
}

export interface Range {
  el: HTMLElement;
  value(): [number, number];
  set(lo: number, hi: number): void;
  destroy(): void;
}

export function createRange(options: RangeOptions): Range {
  const { max } = options;
  let lo = 0;
  let hi = max;
  const el = document.createElement("div");
  el.className = "dp-range";
  el.setAttribute("role", "group");
  const label = document.createElement("div");
  label.className = "dp-range-label";
  label.setAttribute("aria-hidden", "true"); // the group's name says the same
  const track = document.createElement("div");
  track.className = "dp-range-track";
  const fill = document.createElement("div");
  fill.className = "dp-range-fill";
  const handles = options.handleLabels.map((name, k) => {
    const input = document.createElement("input");
    input.type = "range";
    input.min = "0";
    input.max = String(max);
    input.step = "1";
    input.dataset.end = k === 0 ? "lower" : "upper";
    input.setAttribute("aria-label", name);
    return input;
  }) as [HTMLInputElement, HTMLInputElement];
  track.append(fill, ...handles);
  el.append(label, track);

  function show() {
    handles[0].value = String(lo);
    handles[1].value = String(hi);
    handles.forEach((h, k) => h.setAttribute("aria-valuetext", options.valueText(k === 0 ? lo : hi)));
    label.textContent = options.label(lo, hi);
    el.setAttribute("aria-label", label.textContent);
    const at = (i: number) => (max > 0 ? i / max : 0);
    fill.style.left = `calc(${THUMB / 2}px + (100% - ${THUMB}px) * ${at(lo)})`;
    fill.style.width = `calc((100% - ${THUMB}px) * ${at(hi) - at(lo)})`;
  }

  /** Move one end to i; it stops at the other end (the handles never cross). */
  function move(end: 0 | 1, i: number) {
    const [a, b] = end === 0 ? [Math.min(i, hi), hi] : [lo, Math.max(i, lo)];
    const changed = a !== lo || b !== hi;
    [lo, hi] = [a, b];
    show(); // also puts a clamped native value back
    if (changed) options.onChange(lo, hi);
  }

  const onInput = (end: 0 | 1) => () => move(end, Number(handles[end].value));
  const inputs = [onInput(0), onInput(1)];
  handles.forEach((h, k) => h.addEventListener("input", inputs[k]));

  // The pointer: the nearer handle follows it; where both stand at one spot, the first
  // movement's direction picks (left: the lower end, right: the upper end).
  let dragging: 0 | 1 | null = null;
  let tie: { x: number } | null = null;
  const indexAt = (x: number) => {
    const box = track.getBoundingClientRect();
    const span = box.width - THUMB;
    const f = span > 0 ? (x - box.left - THUMB / 2) / span : 0;
    return Math.round(Math.max(0, Math.min(1, f)) * max);
  };
  const down = (event: PointerEvent) => {
    if (event.button !== 0) return;
    event.preventDefault();
    const i = indexAt(event.clientX);
    track.setPointerCapture?.(event.pointerId);
    if (i < lo || (i <= (lo + hi) / 2 && lo !== hi)) dragging = 0;
    else if (i > hi || lo !== hi) dragging = 1;
    else { dragging = null; tie = { x: event.clientX }; handles[1].focus(); return; }
    handles[dragging].focus();
    move(dragging, i);
  };
  const drag = (event: PointerEvent) => {
    if (tie) {
      if (Math.abs(event.clientX - tie.x) < 2) return;
      dragging = event.clientX < tie.x ? 0 : 1;
      tie = null;
      handles[dragging].focus();
    }
    if (dragging !== null) move(dragging, indexAt(event.clientX));
  };
  const up = () => { dragging = null; tie = null; };
  track.addEventListener("pointerdown", down);
  track.addEventListener("pointermove", drag);
  track.addEventListener("pointerup", up);
  track.addEventListener("pointercancel", up);
  show();

  return {
    el,
    value: () => [lo, hi],
    set(a: number, b: number) {
      lo = Math.max(0, Math.min(a, b, max));
      hi = Math.min(max, Math.max(a, b, 0));
      show();
    },
    destroy() {
      handles.forEach((h, k) => h.removeEventListener("input", inputs[k]));
      track.removeEventListener("pointerdown", down);
      track.removeEventListener("pointermove", drag);
      track.removeEventListener("pointerup", up);
      track.removeEventListener("pointercancel", up);
    },
  };
}
