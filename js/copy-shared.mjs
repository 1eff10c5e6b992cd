// Copies the scripts an exported notebook needs to show widgets offline (require.js and
// the widget manager's AMD build, with its fonts) next to the explorer's bundle, so
// diversity_profiles.sharing can place them beside an exported HTML file.
import { cpSync, mkdirSync, readdirSync } from "node:fs";
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
