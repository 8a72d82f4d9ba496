"""Views: traces and memories → offline graph HTML, DataFrames and plotly figures.

Pages import the module they need (`graph_html`, `trace_graphs`, `memory_graphs`,
`tables`, `charts`, `safe_text`); nothing here reaches into algorithm internals,
and no untrusted text is ever turned into markup.
"""
