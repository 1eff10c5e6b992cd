// JupyterLab / Notebook 7 extension: draws the explorer from the JSON that every explorer
// display carries (MIME_TYPE), so a saved notebook shows live sliders and verdicts with no
// kernel and no saved widget state. Charts and verdicts come from ../explorer, the code
// the widget runs.
//
// Where the live widget can be drawn (a kernel that holds the model), it is preferred: it
// can compute more grid points and sync domains back to Python. The renderer asks the
// notebook's own widget renderer first and keeps the kernel-free view otherwise.
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from "@jupyterlab/application";
import { INotebookTracker, type NotebookPanel } from "@jupyterlab/notebook";
import { IRenderMimeRegistry } from "@jupyterlab/rendermime";
import type { IRenderMime } from "@jupyterlab/rendermime-interfaces";
import { Panel, Widget } from "@lumino/widgets";
import { MIME_TYPE, mountStandalone, type StandalonePayload } from "../standalone";

const WIDGET_VIEW = "application/vnd.jupyter.widget-view+json";
// ipywidgets registers its renderer at rank -10; ours must win to be asked at all.
const RANK = -20;
// How long a live widget may take to appear before the kernel-free view is drawn.
const LIVE_GRACE_MS = 400;

class ExplorerRenderer extends Panel implements IRenderMime.IRenderer {
  private cleanup: (() => void) | null = null;
  private standalone: Widget | null = null;
  private live: IRenderMime.IRenderer | null = null;

  // Not `widgets`: that name is Panel's list of children.
  constructor(private readonly registry: IRenderMimeRegistry | null) {
    super();
    this.addClass("dp-mime-explorer");
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const payload = model.data[MIME_TYPE] as unknown as StandalonePayload;
    this.dropStandalone(); // a re-render (trust granted, output updated) starts afresh
    this.live?.dispose();
    this.live = null;
    const liveShown = this.tryLive(model);
    const first = await Promise.race([liveShown, sleep(LIVE_GRACE_MS).then(() => false)]);
    if (first || this.isDisposed) return; // the output may be cleared while we wait
    this.showStandalone(payload);
    // A widget manager that restores later (saved widget state) still wins.
    if (await liveShown) this.dropStandalone();
  }

  /** Draw the ipywidgets view hidden; true once our explorer is drawn inside it. */
  private async tryLive(model: IRenderMime.IMimeModel): Promise<boolean> {
    // Untrusted outputs never reach the widget renderer (it runs kernel-supplied code).
    if (!this.registry || !model.trusted || !(WIDGET_VIEW in model.data)) return false;
    if (!this.registry.mimeTypes.includes(WIDGET_VIEW)) return false;
    const live = this.registry.createRenderer(WIDGET_VIEW);
    this.live = live;
    live.hide();
    this.addWidget(live);
    try {
      await live.renderModel(model);
    } catch {
      return false;
    }
    for (let waited = 0; waited < 2000; waited += 50) {
      if (live.isDisposed) return false;
      if (live.node.querySelector(".dp-explorer")) {
        this.dropStandalone();
        live.show();
        return true;
      }
      await sleep(50);
    }
    return false;
  }

  private showStandalone(payload: StandalonePayload) {
    const host = new Widget();
    this.standalone = host;
    this.addWidget(host);
    try {
      this.cleanup = mountStandalone(host.node, payload);
    } catch (error) {
      host.node.textContent = String((error as Error).message ?? error);
    }
  }

  private dropStandalone() {
    this.cleanup?.();
    this.cleanup = null;
    this.standalone?.dispose();
    this.standalone = null;
  }

  dispose() {
    this.dropStandalone();
    this.live?.dispose();
    super.dispose();
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function factory(widgets: IRenderMimeRegistry | null): IRenderMime.IRendererFactory {
  // Safe: the payload is data; every label is written as text, no markup or code runs.
  return { safe: true, mimeTypes: [MIME_TYPE], createRenderer: () => new ExplorerRenderer(widgets) };
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: "diversity-profiles:explorer",
  description: "Kernel-free diversity-profiles explorer for saved notebooks.",
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, rendermime: IRenderMimeRegistry, notebooks: INotebookTracker | null) => {
    rendermime.addFactory(factory(null), RANK);
    // Each notebook has its own registry, where ipywidgets puts the renderer bound to
    // that notebook's kernel: ours there may hand over to it.
    const adopt = (panel: NotebookPanel) =>
      panel.content.rendermime.addFactory(factory(panel.content.rendermime), RANK);
    notebooks?.forEach(adopt);
    notebooks?.widgetAdded.connect((_tracker, panel) => adopt(panel));
  },
};

export default plugin;
