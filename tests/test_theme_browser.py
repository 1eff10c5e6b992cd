"""The explorer follows the notebook's theme: every piece of text it draws — headings,
matrices, legends, summary, buttons and the charts' SVG text — is readable (WCAG contrast
≥ 4.5:1) under JupyterLab's own Light and Dark theme stylesheets, read from the installed
JupyterLab, in Debian's Chromium; so is the charts' hover tooltip (vega-tooltip's box, drawn
in the page's body), on the theme's own background.

Contrast is measured in the page: each text's computed colour, alpha-composited over the
backgrounds of its ancestors down to the page's (JupyterLab's --jp-layout-color0), then
WCAG 2's relative luminance and contrast ratio.
"""


import pytest
from playwright.sync_api import sync_playwright

from diversity_profiles.display._explorer import ProfileExplorer

from .browser import CHROMIUM, LAUNCH_ARGS, block_outside, serve, write_themed_page
from .test_widget_browser import BUNDLE

#: Every text the explorer shows, with its colour and the colour behind it.
MEASURE = """(selector) => {
  const canvas = document.createElement("canvas").getContext("2d");
  const rgba = (css) => {  // any CSS colour -> [r, g, b, a] in 0..1, via the canvas
    canvas.clearRect(0, 0, 1, 1);
    canvas.fillStyle = "#000"; canvas.fillStyle = css;
    canvas.fillRect(0, 0, 1, 1);
    const [r, g, b, a] = canvas.getImageData(0, 0, 1, 1).data;
    return a === 0 ? [0, 0, 0, 0] : [r / a, g / a, b / a, a / 255];
  };
  const over = (top, bottom) =>
    top.slice(0, 3).map((c, k) => c * top[3] + bottom[k] * (1 - top[3])).concat([1]);
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
      const bg = rgba(getComputedStyle(e).backgroundColor);
      if (bg[3] > 0) layers.push(bg);
      if (bg[3] === 1) break;
    }
    let colour = [1, 1, 1, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const lum = ([r, g, b]) => [r, g, b]
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    .reduce((s, c, k) => s + c * [0.2126, 0.7152, 0.0722][k], 0);
  const out = [];
  const root = document.querySelector(selector || ".dp-explorer");
  for (const el of root.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none") continue;
    const back = behind(el);
    const fore = over(rgba(el instanceof SVGElement ? style.fill : style.color), back);
    const [a, b] = [lum(fore), lum(back)].sort((x, y) => y - x);
    const text = el.textContent.trim().slice(0, 40);
    out.push({ text, tag: el.tagName, ratio: (a + 0.05) / (b + 0.05) });
  }
  return out;
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_is_readable_in_jupyterlab_light_and_dark(paper_tree, tmp_path, theme):
    write_themed_page(tmp_path, BUNDLE, ProfileExplorer(paper_tree).get_state(), theme)
    with serve(tmp_path) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        block_outside(page, url)
        page.goto(f"{url}/index.html")
        page.wait_for_function("window.__ready === true")
        page.wait_for_selector("section[data-family=vendi] svg .mark-line path")
        page.wait_for_selector("section[data-family=vendi] svg text")
        texts = page.evaluate(MEASURE)
        # The hover tooltip: over the middle of the shaded domain, away from the curves.
        shade = page.locator("section[data-family=vendi] svg .layer_0_marks path").first
        shade.scroll_into_view_if_needed()
        box = shade.bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 20)
        page.wait_for_selector("#vg-tooltip-element.visible")
        tip = page.evaluate(MEASURE, "#vg-tooltip-element")
        # Its background is the theme's (a white box on Dark before).
        backgrounds = page.evaluate("""() => {
          const probe = document.createElement("div");
          probe.style.background = "var(--jp-layout-color1)";
          document.body.append(probe);
          const theme = getComputedStyle(probe).backgroundColor;
          probe.remove();
          return [getComputedStyle(document.querySelector("#vg-tooltip-element"))
            .backgroundColor, theme];
        }""")
        page.screenshot(path=str(tmp_path / f"{theme}.png"), full_page=True)
        browser.close()
    assert len(texts) > 50 and any(t["tag"] == "text" for t in texts)  # charts' SVG too
    unreadable = [t for t in texts if t["ratio"] < 4.5]
    assert unreadable == [], unreadable[:10]
    assert len(tip) >= 3  # the heading, and a name and value per set
    assert [t for t in tip if t["ratio"] < 4.5] == []
    assert backgrounds[0] == backgrounds[1]
