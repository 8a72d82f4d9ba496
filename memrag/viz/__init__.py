"""Views: traces and memories → typed pictures drawn as plotly figures (`figure`), DataFrames and
charts.

Pages import the module they need (`figure`, `memory_explorer`, `memory_graphs`, `tables`,
`charts`); nothing here reaches into algorithm internals, and no untrusted text is ever turned
into markup.
"""
