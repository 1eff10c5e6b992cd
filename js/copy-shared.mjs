// Copies the scripts an exported notebook needs offline next to the explorer's bundle, so
// diversity_profiles.sharing can place them beside an exported HTML file: require.js and the
// widget manager's AMD build (with its fonts), and the part of MathJax 2 that nbconvert's
// template drives (CommonHTML output, TeX input, web fonts; no PNG/SVG fonts, no a11y).
import { cpSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";

const out = "src/diversity_profiles/static/share";
mkdirSync(out, { recursive: true });
cpSync("node_modules/requirejs/require.js", join(out, "require.js"));
const dist = "node_modules/@jupyter-widgets/html-manager/dist";
for (const name of readdirSync(dist)) {
  // nbconvert pages load embed-amd.js; the ESM build and the library variant are not needed.
  if (name.endsWith(".map") || name === "embed.js" || name === "libembed-amd.js") continue;
  cpSync(join(dist, name), join(out, name));
}

const mathjax = "node_modules/mathjax";
const target = join(out, "mathjax");
rmSync(target, { recursive: true, force: true });
for (const part of [
  "MathJax.js",
  "config/TeX-AMS_CHTML-full.js",
  "jax/element",
  "jax/input/TeX",
  "jax/output/CommonHTML",
  "fonts/HTML-CSS/TeX/woff",
  "localization/en",
  "extensions/TeX",
  "extensions/HTML-CSS",
  "extensions/MathML",
]) {
  cpSync(join(mathjax, part), join(target, part), { recursive: true });
}
for (const name of readdirSync(join(mathjax, "extensions"))) {
  const path = join(mathjax, "extensions", name);
  if (statSync(path).isFile()) cpSync(path, join(target, "extensions", name));
}
