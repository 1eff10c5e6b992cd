// The explorer's colours come from the page it is drawn in: JupyterLab's --jp-* variables
// (Light, Dark or any theme), VS Code's --vscode-* ones, else the colour of the page around
// it (the report follows the reader's light or dark preference). Charts are transparent
// and draw text and axes in currentColor, so they follow the same text colour.

import { PALETTE } from "./constants";

/** CSS custom properties every explorer style uses (set on the explorer's root). */
export const THEME_STYLE = `
.dp-explorer, .dp-explain {
  --dp-fg: var(--jp-content-font-color1, var(--vscode-editor-foreground, currentColor));
  --dp-muted: var(--jp-content-font-color2, color-mix(in srgb, currentColor 72%, transparent));
  --dp-raised: var(--jp-layout-color2, color-mix(in srgb, currentColor 8%, transparent));
  --dp-pressed: var(--jp-layout-color3, color-mix(in srgb, currentColor 22%, transparent));
  --dp-border: var(--jp-border-color1, color-mix(in srgb, currentColor 35%, transparent));
  --dp-focus: var(--jp-brand-color1, ${PALETTE[0]});
  /* Theme hues pulled toward the text colour: darker on light themes, lighter on dark. */
  --dp-good: color-mix(in srgb, var(--jp-success-color1, #2e7d32) 65%, var(--dp-fg));
  --dp-bad: color-mix(in srgb, var(--jp-error-color1, #c62828) 65%, var(--dp-fg));
  --dp-link: var(--jp-content-link-color, color-mix(in srgb, ${PALETTE[0]} 65%, var(--dp-fg)));
  color: var(--dp-fg);
}
.dp-explorer button, .dp-explain button, .dp-explorer select, .dp-explain select {
  color: var(--dp-fg); background: var(--dp-raised); border: 1px solid var(--dp-border);
  border-radius: 4px; font: inherit; padding: 1px 8px;
}
.dp-explorer button:hover, .dp-explain button:hover { background: var(--dp-pressed); }
.dp-explorer :focus-visible, .dp-explain :focus-visible { outline: 2px solid var(--dp-focus); outline-offset: 1px; }
.dp-explorer input[type=range] { accent-color: var(--dp-focus); }
/* vega-tooltip's box lives in <body>, outside the explorer: the page's variables directly
   (TOOLTIP_OPTIONS names the theme, whose class is "dp-theme"). */
#vg-tooltip-element.dp-theme {
  color: var(--jp-ui-font-color1, var(--vscode-editor-foreground, CanvasText));
  background-color: var(--jp-layout-color1, var(--vscode-editor-background, Canvas));
  border: 1px solid var(--jp-border-color1, color-mix(in srgb, CanvasText 35%, transparent));
  font-family: var(--jp-ui-font-family, system-ui, sans-serif);
}
#vg-tooltip-element.dp-theme td.key {
  color: var(--jp-ui-font-color2, var(--vscode-descriptionForeground, color-mix(in srgb, CanvasText 72%, Canvas)));
}
`;

/** vega-embed's tooltip options: the "dp" theme styled above. */
export const TOOLTIP_OPTIONS = { theme: "dp" } as const;

/** Vega-Lite config shared by every chart: no background of its own, text and axes in the
 *  container's colour. */
export const CHART_CONFIG = {
  background: "transparent",
  config: {
    axis: { labelColor: "currentColor", titleColor: "currentColor", domainColor: "currentColor",
      tickColor: "currentColor", gridColor: "#888888", gridOpacity: 0.25 },
    legend: { labelColor: "currentColor", titleColor: "currentColor" },
    title: { color: "currentColor", subtitleColor: "currentColor" },
    view: { stroke: null },
  },
} as const;
