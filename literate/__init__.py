"""Turn literate Python sources into side-by-side pages.

The pipeline is a chain of plain functions over the frozen dataclasses of
`literate.model`: parse → (translate) → render. The mkdocs plugin and the
command line are thin adapters over it.
"""
