"""The cache key of an example: a hash of everything its result depends on.

That is the expression itself, and the code it can reach: starting from the
names it uses, every top-level statement of the module that binds one of
them, then the names those statements use, and so on. A statement that binds
nothing at the top level (`os.environ.setdefault(...)`) runs on import, so it
counts for every example. An import of a module that lives in the repository
is followed into that module, name by name (`from mha import KVCache`) or
whole (`import mha`), found where the examples' process finds it: relative
imports from the module's package, absolute ones from its import root (see
`import_root`), then its own folder, then the repository root. Installed
packages count by their versions, with the Python version.

Statements are compared as `ast.unparse` prints them, without comments or
docstrings: rewording the prose of a page re-runs nothing. The
`if __name__ == "__main__":` block does not run on import and does not count.
Data files an example reads are not code; the cache checks them separately.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import warnings
from dataclasses import dataclass
from pathlib import Path

from literate.textfile import read_utf8

# Installed packages whose versions are part of every key, unless the caller
# names others (the plugin's `packages` option).
PACKAGES = ("torch", "numpy", "matplotlib")

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
NESTED = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# What a statement needs from another module: a name, or (None) all of it.
Need = tuple[Path, str | None]


@dataclass(frozen=True)
class ModuleCode:
    """A module's top-level statements and what each binds, uses and imports."""

    statements: tuple[str, ...]  # unparsed, without docstrings
    binds: dict[str, tuple[int, ...]]  # name -> statements that bind it
    uses: tuple[frozenset[str], ...]  # names each statement loads
    imports: tuple[tuple[Need, ...], ...]  # repository modules each imports
    on_import: tuple[int, ...]  # statements that bind nothing, run on import
    words: tuple[tuple[str, ...], ...] = ()  # `tr("...")` literals of each
    # Names each statement uses only as `name.attribute`, with those attributes.
    attributes: tuple[dict[str, frozenset[str]], ...] = ()
    modules: tuple[Path | None, ...] = ()  # the file an `import m (as n)` binds


@dataclass(frozen=True)
class Reach:
    """What evaluating an example can run, from one walk of the code: the
    statements (`file: code`, sorted) and the `tr("...")` words among them."""

    code: tuple[str, ...]
    words: tuple[str, ...]


def reach(root: Path, source: str, expr: str) -> Reach:
    """The code and the words that `expr`, evaluated in `root / source`, reaches."""
    tree = ast.parse(expr, mode="eval")
    found = _reach(root, root / source, _uses(tree), _attributes(tree))
    code = {
        f"{file.relative_to(root).as_posix()}: {analyse(root, file).statements[i]}"
        for file, i in found
    }
    words = {word for file, i in found for word in analyse(root, file).words[i]}
    return Reach(tuple(sorted(code)), tuple(sorted(words)))


def code_key(
    root: Path,
    source: str,
    expr: str,
    salt: object = None,
    packages: tuple[str, ...] = PACKAGES,
    reached: Reach | None = None,
) -> str:
    """The hex digest for `expr` evaluated in the module at `root / source`.

    `reached`: what `reach` found for it, when the caller has it already.
    """
    reached = reached or reach(root, source, expr)
    payload = {
        "salt": salt,
        "python": platform.python_version(),
        "packages": versions(tuple(packages)),
        "source": source,
        "expr": expr,
        "code": list(reached.code),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@functools.cache
def versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """The installed versions of `packages` ("" when one is not installed)."""
    found = {}
    for name in packages:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = ""
    return found


def reachable_code(
    root: Path, path: Path, names: set[str], used_as: dict | None = None
) -> set[str]:
    """The statements (`file: code`) that evaluating `names` in `path` can run."""
    return {
        f"{file.relative_to(root).as_posix()}: {analyse(root, file).statements[i]}"
        for file, i in _reach(root, path, names, used_as)
    }


def example_words(root: Path, source: str, expr: str) -> tuple[str, ...]:
    """The `tr("...")` words (see `literate.words`) that `expr` can reach, sorted."""
    return reach(root, source, expr).words


def _reach(
    root: Path, path: Path, names: set[str], used_as: dict | None = None
) -> set[tuple[Path, int]]:
    """The (file, statement index) pairs that evaluating `names` can run.

    `used_as[name]`: the attributes used of a name that is used only as
    `name.attribute`; of a module imported whole, only those are followed.
    """
    used_as = used_as or {}
    seen: set[tuple[Path, int]] = set()
    partly: set[tuple[Path, int]] = set()  # imports followed by attribute only
    visited: set[Path] = set()
    # (file, name, the attributes used of it; None: all of it)
    work: list[tuple[Path, str | None, frozenset[str] | None]]
    work = [(path, name, used_as.get(name)) for name in names]
    while work:
        file, name, attributes = work.pop()
        module = analyse(root, file)
        wanted = list(module.binds.get(name, ())) if name else []
        if name is None:
            wanted = list(range(len(module.statements)))
        if file not in visited:
            visited.add(file)
            wanted += module.on_import
        for index in wanted:
            imported = module.modules[index]
            if attributes is not None and imported:
                # `import m as n` used only as `n.a`: follow m's `a` alone.
                if (file, index) not in seen:
                    seen.add((file, index))
                    partly.add((file, index))
                work += [(imported, a, None) for a in attributes]
                work.append((imported, "", None))  # m's statements run on import
                continue
            if (file, index) in seen and (file, index) not in partly:
                continue
            seen.add((file, index))
            partly.discard((file, index))
            used_as = module.attributes[index]
            work += [(file, used, used_as.get(used)) for used in module.uses[index]]
            work += [(f, n, None) for f, n in module.imports[index]]
    return seen


def analyse(root: Path, path: Path) -> ModuleCode:
    """`path`'s statements; cached while the file keeps its size and mtime."""
    stat = path.stat()
    return _analyse(root, path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _analyse(root: Path, path: Path, _mtime: int, _size: int) -> ModuleCode:
    with warnings.catch_warnings():  # parse reports them, with their lines
        warnings.simplefilter("ignore")
        tree = ast.parse(read_utf8(path), str(path))  # a leading BOM is dropped
    statements = [s for s in tree.body if not _skipped(s, tree.body)]
    binds: dict[str, list[int]] = {}
    on_import = []
    for index, statement in enumerate(statements):
        bound = _binds(statement)
        for name in bound:
            binds.setdefault(name, []).append(index)
        if not bound:
            on_import.append(index)
    imports = tuple(tuple(_imports(root, path, s)) for s in statements)
    uses = tuple(frozenset(_uses(s)) for s in statements)
    words = tuple(tuple(_words(s)) for s in statements)
    attributes = tuple(_attributes(s) for s in statements)
    modules = tuple(_module_of(root, path, s) for s in statements)
    for statement in statements:
        _drop_docstrings(statement)
    return ModuleCode(
        statements=tuple(ast.unparse(s) for s in statements),
        binds={name: tuple(indexes) for name, indexes in binds.items()},
        uses=uses,
        imports=imports,
        on_import=tuple(on_import),
        words=words,
        attributes=attributes,
        modules=modules,
    )


def _attributes(node: ast.AST) -> dict[str, frozenset[str]]:
    """The names that `node` loads only as `name.attribute`, with the attributes."""
    used: dict[str, set[str]] = {}
    bare: set[str] = set()
    parents = {child: n for n in ast.walk(node) for child in ast.iter_child_nodes(n)}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            parent = parents.get(n)
            if isinstance(parent, ast.Attribute) and parent.value is n:
                used.setdefault(n.id, set()).add(parent.attr)
            else:
                bare.add(n.id)
    return {name: frozenset(a) for name, a in used.items() if name not in bare}


def _module_of(root: Path, path: Path, statement: ast.stmt) -> Path | None:
    """The repository file that `import m` or `import m as n` binds, if any."""
    if not isinstance(statement, ast.Import) or len(statement.names) != 1:
        return None
    name = statement.names[0].name
    files = _module_files(root, path, name) if "." not in name else []
    return files[-1] if files else None


def _words(node: ast.AST) -> list[str]:
    """The string literals passed to `tr(...)` or `something.tr(...)` in `node`."""
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call) or len(call.args) != 1:
            continue
        name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
        arg = call.args[0]
        if name == "tr" and isinstance(getattr(arg, "value", None), str):
            found.append(arg.value)
    return found


def _skipped(statement: ast.stmt, body: list[ast.stmt]) -> bool:
    """The module docstring and the `if __name__ == "__main__":` block."""
    if statement is body[0] and _is_docstring(statement):
        return True
    if not isinstance(statement, ast.If):
        return False
    test = ast.unparse(statement.test).replace("'", '"')
    return test in ('__name__ == "__main__"', '"__main__" == __name__')


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _binds(node: ast.AST) -> set[str]:
    """The names a top-level statement binds in the module's namespace."""
    if isinstance(node, SCOPES):
        return {node.name}
    if isinstance(node, ast.Import):
        return {a.asname or a.name.split(".")[0] for a in node.names}
    if isinstance(node, ast.ImportFrom):
        return {a.asname or a.name for a in node.names if a.name != "*"}
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return {node.id}
    if isinstance(node, NESTED):
        return set()
    bound: set[str] = set()
    for child in ast.iter_child_nodes(node):
        bound |= _binds(child)
    return bound


def _uses(node: ast.AST) -> set[str]:
    """Every name loaded anywhere in `node` (nested functions included)."""
    return {
        n.id
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)
    }


def _imports(root: Path, path: Path, statement: ast.stmt) -> list[Need]:
    """The repository modules (and names) that `statement` imports."""
    needs: list[Need] = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Import):
            for alias in node.names:
                needs += [(f, None) for f in _module_files(root, path, alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            files = _module_files(root, path, base)
            needs += [(f, "") for f in files[:-1]]  # packages run on import
            for alias in node.names:
                dot = "" if base.endswith(".") else "."
                sub = _module_files(root, path, f"{base}{dot}{alias.name}")
                if sub and sub[-1] not in files:
                    needs.append((sub[-1], None))  # a submodule, whole
                elif files:
                    name = None if alias.name == "*" else alias.name
                    needs.append((files[-1], name))
    return needs


def import_root(path: Path, root: Path) -> Path:
    """The folder a page's module is imported from: the first folder above
    `path` that is not a package (holds no `__init__.py`), never above `root`.

    `src/geom/vectors.py` in a package `geom` imports from `src/`, as
    `geom.vectors`; `mha.py` at the root imports from the root, as `mha`.
    """
    folder, top = path.parent, Path(os.path.abspath(root))
    while (
        (folder / "__init__.py").is_file()
        and Path(os.path.abspath(folder)) != top
        and Path(os.path.abspath(folder)).is_relative_to(top)
    ):
        folder = folder.parent
    return folder


def module_name(path: Path, root: Path) -> str:
    """The dotted name `path` is imported under from its `import_root`:
    `geom.vectors`, `geom` for `geom/__init__.py`, `mha` for `mha.py`."""
    parts = path.relative_to(import_root(path, root)).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or path.stem


def _module_files(root: Path, path: Path, dotted: str) -> list[Path]:
    """The files that importing `dotted` runs, packages first; [] if not local."""
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted.lstrip(".").split(".") if p]
    absolute = dict.fromkeys([import_root(path, root), path.parent, root])
    bases = [path.parents[level - 1]] if level else list(absolute)
    for base in bases:
        files = []
        for i in range(1, len(parts) + 1):
            folder = base.joinpath(*parts[:i])
            if (folder / "__init__.py").is_file():
                files.append(folder / "__init__.py")
            elif i == len(parts) and folder.with_suffix(".py").is_file():
                files.append(folder.with_suffix(".py"))
            else:
                break
        if len(files) == len(parts) and files and _inside(files[-1], root):
            return files
    return []


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _drop_docstrings(node: ast.AST) -> None:
    """Remove the docstring of every function and class in `node`, in place."""
    for child in ast.walk(node):
        if isinstance(child, SCOPES) and child.body and _is_docstring(child.body[0]):
            child.body = child.body[1:] or [ast.Pass()]
