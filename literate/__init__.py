"""Turn literate Python sources into side-by-side pages.

The pipeline (`literate.pipeline`) is a chain of plain functions over the
frozen dataclasses of `literate.model`: parse → execute → translate →
render, and the notebook. The mkdocs plugin (`literate.mkdocs`) and the
command line (`literate.__main__`) are thin adapters over it; the
translators' tools are in `literate.translations`.
"""
