// Mounts a live explorer in every explorer output of the page (docs/_ext/dp_docs.py).
// A classic, deferred script (a module script cannot load from file://). The bundle arrived
// as a string (dp-explorer-bundle.js) and is imported from a Blob URL: nothing is fetched
// from the network, and a page opened from disk works too.
(async () => {
  const outputs = document.querySelectorAll(".dp-docs-explorer");
  if (outputs.length > 0) {
    const url = URL.createObjectURL(
      new Blob([window.__dpExplorerBundle], { type: "text/javascript" }),
    );
    const { mountStandalone } = await import(url);
    for (const output of outputs) {
      try {
        const payload = JSON.parse(output.querySelector("script.dp-payload").textContent);
        mountStandalone(output.querySelector(".dp-docs-live"), payload);
        output.classList.add("dp-mounted"); // the static charts give way to the live ones
      } catch (error) {
        console.error("diversity-profiles: this explorer could not start;", error);
      }
    }
  }
  window.__dpDocsReady = true;
})();
