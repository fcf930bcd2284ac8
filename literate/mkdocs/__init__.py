"""The mkdocs adapter: the `literate` plugin, its options and the search view."""
