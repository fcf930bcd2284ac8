"""Translation tooling: string tables, their checks, updates and status.

`tables` reads and writes the JSON tables, `check` judges one entry,
`update` brings a table up to date with the English, `status` counts what is
translated, `layout` knows where a site keeps its tables, and `cli` is the
`literate translations` command.
"""
