"""What a user sees: the notebook explorer, its explanation panels, static charts, the
offline report and the notebook display hook. The only layer that imports anywidget,
traitlets, Altair or vl-convert."""

from ._constants import BUNDLE, MIME_TYPE
from ._explorer import ProfileExplorer
from ._html_report import report
from ._notebook import tree_mimebundle
from ._plotting import plot_profiles

__all__ = [
    "BUNDLE",
    "MIME_TYPE",
    "ProfileExplorer",
    "plot_profiles",
    "report",
    "tree_mimebundle",
]
