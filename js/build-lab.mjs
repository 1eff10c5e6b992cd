// Builds the prebuilt JupyterLab / Notebook 7 extension into
// src/diversity_profiles/labextension (shipped in the wheel, installed with the package):
// esbuild bundles our code with Vega (JupyterLab and Lumino stay external: the running
// JupyterLab provides them), then @jupyterlab/builder wraps it for module federation.
// The builder needs the core metadata of the JupyterLab Python package.
import { execFileSync } from "node:child_process";
import { build } from "esbuild";

await build({
  entryPoints: ["js/labextension/index.ts"],
  bundle: true,
  format: "esm",
  minify: true,
  target: "es2020",
  define: { "define.amd": "false" },
  external: ["@jupyterlab/*", "@lumino/*"],
  outfile: "js/labextension/lib/index.js",
});

function corePath() {
  const script = "import jupyterlab, os; print(os.path.join(os.path.dirname(jupyterlab.__file__), 'staging'))";
  for (const python of [process.env.PYTHON, "python", "python3"].filter(Boolean)) {
    try {
      return execFileSync(python, ["-c", script], { encoding: "utf8" }).trim();
    } catch {
      // try the next interpreter
    }
  }
  throw new Error(
    "Building the JupyterLab extension needs the JupyterLab Python package (its core metadata). " +
      "Install it (pip install 'jupyterlab>=4.2,<5') or build through pip, which brings it.",
  );
}

execFileSync(
  process.execPath,
  ["node_modules/@jupyterlab/builder/lib/build-labextension.js", "--core-path", corePath(), "js/labextension"],
  { stdio: "inherit" },
);
