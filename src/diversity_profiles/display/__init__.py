"""What a user sees: the notebook explorer, its explanation panels, static charts, the
offline report and the notebook display hook. The only layer that imports anywidget,
traitlets, Altair or vl-convert."""
