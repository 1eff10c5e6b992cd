// The anywidget entry point (bundled to src/diversity_profiles/static/widget.js). The same
// bundle serves the HTML report through mountStandalone.
import { render, summarize } from "./explorer";

export { mountStandalone } from "./standalone";
export { summarize };
export default { render };
