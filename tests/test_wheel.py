"""The renderer as someone else installs it: its own wheel, in another folder.

The renderer's wheel (`literate-pages`, built from `literate/pyproject.toml`
in a copy of this checkout) is installed two ways:

- (not editable) into a temporary folder that comes first on PYTHONPATH, its
  dependencies this environment's: a small site outside the repository, with
  mkdocs' own theme, a package tree, math and a Japanese translation, is made
  with the installed `literate` command and `mkdocs build --strict`;
- into a fresh virtualenv with its declared dependencies and mkdocs-material
  only (no torch, labml or matplotlib), from a local wheel cache
  (`.cache/wheels`, filled by `pip download` at the pinned versions when a
  wheel is missing), with no node on PATH: a package of literate files that
  import each other, absolute and relative, with executed examples and math,
  builds with material. The packages it installs beyond mkdocs-material's own
  are printed and counted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow

PACKAGE = {
    "pkg/__init__.py": '''"""
---
title: A package of attention
---

# A package of attention

The scores are $s = q \\cdot k / \\sqrt{d}$; the module is [here](mod.html),
its subpackage [there](sub/index.html).
"""
''',
    "pkg/mod.py": r'''"""The module: weights $w = \mathrm{softmax}(s)$.

Back to [the index](index.html).
"""

# Twice a number, $2x$.
def double(x):
    return 2 * x
''',
    "pkg/sub/__init__.py": '"""# A subpackage\n\nUp to [the module](../mod.html)."""\n',
}

MKDOCS = """site_name: installed
use_directory_urls: false
theme: mkdocs
plugins:
  - i18n:
      docs_structure: suffix
      languages:
        - {locale: en, name: English, default: true}
        - {locale: ja, name: 日本語}
  - literate:
      sources: [pkg]
      base: pkg
"""


def run(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def write_site(site: Path, files: dict[str, str], mkdocs_yml: str) -> Path:
    """A site folder: its sources, an empty docs/ and its mkdocs.yml."""
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text, encoding="utf-8")
    (site / "docs").mkdir()
    (site / "mkdocs.yml").write_text(mkdocs_yml, encoding="utf-8")
    return site


PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The renderer's wheel, built from a copy of the checkout's literate/."""
    tmp = tmp_path_factory.mktemp("wheel")
    checkout = tmp / "checkout"
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "literate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, checkout / name)
    env = dict(os.environ, PIP_NO_INDEX="1", LITERATE_KATEX="")
    build = ["wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist")]
    run(PIP + build + ["./literate"], checkout, env)
    [built] = (tmp / "dist").glob("*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """The folder the wheel is installed into, and an environment using it."""
    target = tmp_path_factory.mktemp("installed")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PIP_NO_INDEX="1")
    env["LITERATE_KATEX"] = ""  # the in-process engine, as a user gets it
    run(PIP + ["install", "--no-deps", "--target", str(target), str(wheel)], ROOT, env)
    env["PYTHONPATH"] = str(target)
    return target, env


def test_the_wheel_carries_the_renderers_assets(installed):
    target, env = installed
    assert (target / "literate" / "katex_render.js").is_file()
    katex = target / "literate" / "vendor" / "katex"
    assert {p.name for p in katex.iterdir()} == {
        "katex.min.js",
        "katex.min.css",
        "LICENSE",
        "fonts",
    }
    assert len(list((katex / "fonts").glob("*.woff2"))) == 20
    # Only the renderer's package at the top level: not the tutorial's modules.
    assert {p.name for p in target.iterdir() if p.suffix != ".dist-info"} == {
        "literate",
        "bin",
    }
    assert (target / "literate" / "assets" / "literate.css").is_file()
    code = "import literate.pipeline as p; print(p.__file__)"
    where = run([sys.executable, "-c", code], ROOT.parent, env)
    assert Path(where.strip()).is_relative_to(target)  # not the checkout


def test_an_installed_renderer_builds_a_package_tree_with_math_and_a_translation(
    installed, tmp_path
):
    target, env = installed
    site = write_site(tmp_path / "site", PACKAGE, MKDOCS)

    literate = [str(target / "bin" / "literate")]
    report = run(literate + ["translations", "update", "ja"], site, env)
    assert "translations/ja/pkg/mod.json" in report
    table_file = site / "translations" / "ja" / "pkg" / "mod.json"
    table = json.loads(table_file.read_text(encoding="utf-8"))
    [english] = [k for k in table if k.startswith("Twice")]
    table[english] = "数の二倍、_^_0_^_。"
    table_file.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")

    run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "out"], site, env)
    out = site / "out"
    pages = {p: (out / p).read_text(encoding="utf-8") for p in PAGES}
    assert (
        "<h1" in pages["index.html"] and "A package of attention" in pages["index.html"]
    )
    assert pages["index.html"].count("<math") == 1
    assert '<a href="mod.html">here</a>' in pages["index.html"]
    assert '<a href="../mod.html">the module</a>' in pages["sub/index.html"]
    assert "数の二倍" in pages["ja/mod.html"] and "<math" in pages["ja/mod.html"]
    assert "数の二倍" not in pages["mod.html"]
    for page, html in pages.items():
        up = "../" * page.count("/")
        assert f'href="{up}assets/literate.css"' in html, page
        assert f'href="{up}assets/katex/katex.min.css"' in html, page
    assert (out / "assets" / "literate.css").is_file()
    assert (out / "assets" / "katex" / "katex.min.css").is_file()


PAGES = ["index.html", "mod.html", "sub/index.html", "ja/mod.html"]


def test_a_broken_link_fails_the_strict_build_naming_file_and_line(installed, tmp_path):
    _, env = installed
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        '"""# Index\n\nSee [gone](missing.html)."""\n', encoding="utf-8"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text(
        "site_name: t\nplugins:\n  - literate:\n      sources: [pkg/*.py]\n",
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", "out"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode != 0
    assert "pkg/__init__.py:3: link to 'missing.html'" in done.stderr


# --- a fresh virtualenv: the renderer's own dependencies, no node ---------------

GEOM = {
    "src/geom/__init__.py": r'''r"""
# Geometry

Vectors and the angle between them, $\cos\theta = a \cdot b / (|a||b|)$.
"""

from geom.vectors import dot

# The package's own example: $e_1 \cdot e_1$.
#| dot([1, 0], [1, 0])
ORIGIN = (0, 0)
''',
    "src/geom/vectors.py": r'''r"""# Vectors

The dot product $a \cdot b = \sum_i a_i b_i$.
"""


# The dot product.
def dot(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


# The length, $|a| = \sqrt{a \cdot a}$.
#| norm([3, 4])
def norm(a):
    return dot(a, a) ** 0.5
''',
    "src/geom/angles.py": r'''r"""# Angles

Built from [the vectors](vectors.html), imported absolutely and relatively.
"""

from geom.vectors import dot

from . import ORIGIN
from .vectors import norm


# The cosine of the angle: $\cos\theta = \frac{a \cdot b}{|a|\,|b|}$.
#| print(f"cos = {cosine([1, 0], [1, 1]):.4f}, origin {ORIGIN}, in {__name__}")
def cosine(a, b):
    return dot(a, b) / (norm(a) * norm(b))
''',
}

GEOM_MKDOCS = """site_name: geom
theme: material
plugins:
  - search
  - literate:
      sources: [src/geom]
      base: src
"""

MATERIAL = "mkdocs-material==9.8.2"
WHEELS = ROOT / ".cache" / "wheels"


def fill_wheel_cache(wanted: list[str]) -> list[str]:
    """pip options that install `wanted` from the local wheel cache only;
    the cache is completed from the registry (pinned versions) if need be."""
    offline = ["--no-index", "--find-links", str(WHEELS)]
    download = PIP + ["download", "--dest", str(WHEELS), "-c", "requirements.txt"]
    have = subprocess.run(
        download + offline + wanted, cwd=ROOT, capture_output=True, text=True
    )
    if have.returncode != 0:
        run(download + wanted, ROOT, dict(os.environ))
    return offline


def distributions(python: Path) -> set[str]:
    code = (
        "import importlib.metadata as m\n"
        "print('\\n'.join(sorted({d.metadata['Name'].lower().replace('_', '-') "
        "for d in m.distributions()})))"
    )
    listed = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return set(listed.stdout.split()) - {"pip", "setuptools"}


def test_a_fresh_virtualenv_builds_a_package_site_without_torch_or_node(
    wheel, tmp_path
):
    offline = fill_wheel_cache([str(wheel), MATERIAL])
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, {})
    python = venv / "bin" / "python"
    into = PIP + ["--python", str(python), "install", *offline]
    run(into + [MATERIAL], tmp_path, dict(os.environ))
    material = distributions(python)
    run(into + [str(wheel), MATERIAL], tmp_path, dict(os.environ))
    extra = sorted(distributions(python) - material)
    print(
        f"\nmkdocs-material installs {len(material)} packages; the renderer adds "
        f"{len(extra)}: {', '.join(extra)}"
    )
    assert "literate-pages" in extra and "mini-racer" in extra
    assert not {"torch", "labml", "matplotlib", "numpy"} & set(extra)
    assert len(extra) <= 12

    site = write_site(tmp_path / "site", GEOM, GEOM_MKDOCS)
    path = str(venv / "bin")  # nothing else: no node
    assert shutil.which("node", path=path) is None
    env = {"PATH": path, "HOME": str(tmp_path), "NO_MKDOCS_2_WARNING": "1"}
    mkdocs = [str(venv / "bin" / "mkdocs"), "build", "--strict", "-d", "out"]
    run(mkdocs, site, env)

    out = site / "out" / "geom"
    pages = {
        name: (out / name / "index.html").read_text(encoding="utf-8")
        for name in (".", "vectors", "angles")
    }
    for name, html in pages.items():
        assert '<span class="katex' in html and "<math" in html, name
        assert "katex-error" not in html and "lit-tex" not in html, name
    assert "cos = 0.7071, origin (0, 0), in geom.angles" in pages["angles"]
    shown = '<pre><code><span class="lit-line">'
    assert f"{shown}5.0<" in pages["vectors"]  # norm([3, 4])
    assert f"{shown}1<" in pages["."]  # dot([1, 0], [1, 0]) in __init__.py
    assert 'href="../vectors/"' in pages["angles"]  # directory URLs
    fonts = site / "out" / "assets" / "katex" / "fonts"
    assert (fonts / "KaTeX_Main-Regular.woff2").is_file()
