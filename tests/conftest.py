"""Shared test setup and helpers: the repository root on sys.path (so
`import mha` works), the golden-file check, an HTML tag reader, a stand-in
translator, and what lets the suite run on several workers (pytest-xdist,
`make test` passes `-n`): a folder the workers of one run share, things made
once in it, and the groups of tests that must run on one worker. Test files
import these from `conftest`."""

import collections
import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest
from filelock import FileLock, Timeout

# Idle OpenMP threads spin while they wait for work; on a machine whose cores
# are shared (CI, a laptop running other things) that makes small torch ops
# many times slower. Passive waiting must be chosen before torch is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# KaTeX through node in this process: the in-process V8 stopped answering
# after other tests in one long run (not yet understood); test_katex_engine
# and the wheel test check the in-process engine on their own.
os.environ.setdefault("LITERATE_KATEX", "node")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The KaTeX distribution that `npm ci` installs (the plugin's default).
KATEX_DIST = ROOT / "node_modules" / "katex" / "dist"
# The lesson's chapters, in reading order: the literate sources of mkdocs.yml.
CHAPTERS = ("attention.py", "mha.py", "layers.py", "train.py", "generate.py")

# Golden files: `tests/golden/NAME.py` and what it parses and renders to;
# LITERATE_UPDATE_GOLDEN=1 rewrites them after a deliberate change.
GOLDEN = Path(__file__).parent / "golden"
UPDATE_GOLDEN = os.environ.get("LITERATE_UPDATE_GOLDEN") == "1"


def compare_golden(expected: Path, actual: str) -> None:
    if UPDATE_GOLDEN:
        expected.write_text(actual, encoding="utf-8")
    assert expected.exists(), f"{expected}: missing; LITERATE_UPDATE_GOLDEN=1 makes it"
    assert actual == expected.read_text(encoding="utf-8")


class Tree(HTMLParser):
    """Every start tag of a document as (tag, attributes), and its text."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def find(self, tag, **attrs):
        return [
            a
            for t, a in self.tags
            if t == tag and all(a.get(k.rstrip("_")) == v for k, v in attrs.items())
        ]


def japanese(value: str) -> str:
    """A stand-in translation of a key that keeps every placeholder (and a
    leading heading a heading: the mark goes after its `#`s)."""
    marks = len(value) - len(value.lstrip("#"))
    if marks and value[marks : marks + 1] == " ":
        return value[: marks + 1] + "【訳】" + value[marks + 1 :]
    return "【訳】" + value


# --- several workers --------------------------------------------------------------


def shared_folder(tmp_path_factory) -> Path:
    """A folder that every worker of this run shares, and no other run:
    pytest-xdist gives each worker `<basetemp>/popen-gwN`, so their parent;
    without xdist, the base temporary folder itself."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def made_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """`name` in the run's shared folder, made by `make(path)` for the first
    worker (or module) that asks, or by `start_making` earlier; the others
    wait for it, then use it. A failure is kept: those that ask later fail
    with its message at once, rather than spending the time to fail again."""
    root = shared_folder(tmp_path_factory)
    path, done, failed = _marks(root, name)
    with _lock(root, name):  # held while another worker makes it
        if not done.exists() and not failed.exists():
            _make(make, path, done, failed)
    if failed.exists():
        pytest.fail(failed.read_text(encoding="utf-8"), pytrace=False)
    return path


def start_making(
    tmp_path_factory, name: str, make: Callable[[Path], None]
) -> threading.Thread:
    """Begin `made_once`'s work for `name` now, in a thread of this process
    (returned), unless a worker has begun or finished it: what would
    otherwise wait for it runs meanwhile, and `made_once` waits for the
    thread. Join the thread before the process ends."""
    root = shared_folder(tmp_path_factory)
    path, done, failed = _marks(root, name)

    def run() -> None:
        try:
            with _lock(root, name).acquire(timeout=0):
                if not done.exists() and not failed.exists():
                    _make(make, path, done, failed)
        except Timeout:
            pass  # another worker is making it
        except BaseException:  # kept in `failed`: made_once reports it
            pass

    thread = threading.Thread(target=run, name=f"making {name}", daemon=True)
    thread.start()
    return thread


def _marks(root: Path, name: str) -> tuple[Path, Path, Path]:
    """The thing, the file saying it is done, the file holding its failure."""
    return root / name, root / f"{name}.done", root / f"{name}.failed"


def _lock(root: Path, name: str) -> FileLock:
    return FileLock(root / f"{name}.lock")


def _make(make: Callable[[Path], None], path: Path, done: Path, failed: Path) -> None:
    try:
        make(path)
    except BaseException as error:
        failed.write_text(f"{path.name}: {error}", encoding="utf-8")
        raise
    done.touch()


def needs_site(item: pytest.Item) -> bool:
    """Whether `item` uses test_site's built site (the `site` fixture)."""
    return "site" in getattr(item, "fixturenames", ())


@pytest.fixture(scope="session", autouse=True)
def site_started_early(request, tmp_path_factory):
    """When a test of this run needs the built site, the first worker to
    start begins building it at once, in a thread, while the tests that do
    not need it run (they come first: `pytest_collection_modifyitems`). A
    worker that ends first still waits for its build: another needs it."""
    thread = None
    if any(needs_site(item) for item in request.session.items):
        from test_site import build_site

        thread = start_making(tmp_path_factory, "site", build_site)
    yield
    if thread is not None:
        thread.join()


def worker_group(item: pytest.Item) -> str | None:
    """The group of tests that `item` runs with on one worker, or None to
    run wherever a worker is free. A test that uses a module-scoped fixture
    runs with the rest of its module, so the fixture is made once; one that
    reads a page through test_site's `visit` runs with the tests of the same
    page, so the page is loaded once."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for definitions in info.name2fixturedefs.values():
        if any(d.scope == "module" for d in definitions):
            return f"module:{item.path.name}"
    if "visit" in item.fixturenames and "name" in item.callspec.params:
        return f"page:{item.callspec.params['name']}"
    return None


GROUPS = "worker-groups.json"  # nodeid -> group, in the run's base folder


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config, items):
    """After pytest's own ordering, the tests that need the built site go
    last, so that it is built while the others run: its groups first,
    largest first, so that the workers finish together. On a worker, the
    groups go to a file for the scheduler (`pytest_xdist_make_scheduler`)."""
    result = yield
    groups = {item.nodeid: worker_group(item) for item in items}
    sizes = collections.Counter(groups.values())

    def order(item: pytest.Item) -> tuple:
        if not needs_site(item):
            return (0,)
        group = groups[item.nodeid]
        return (1, group is None, -sizes[group])

    items.sort(key=order)  # stable: pytest's order within each group
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = Path(config.option.basetemp).parent  # xdist's: <base>/popen-gwN
        grouped = {nodeid: group for nodeid, group in groups.items() if group}
        fd, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(grouped, f)
        os.replace(temporary, folder / GROUPS)  # every worker writes the same
    return result


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (pyproject.toml) with the groups of `worker_group`:
    xdist's own reads `xdist_group` marks into node ids, which pytest 9 no
    longer lets a plugin change. The workers write the groups when they have
    collected the tests, before the scheduler first needs them. The units go
    out in the order of the collection (`--no-loadscope-reorder`)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    groups_file = config._tmp_path_factory.getbasetemp() / GROUPS

    class GroupScheduling(LoadScopeScheduling):
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # none if no worker wrote them: one per test
                known = groups_file.exists()
                text = groups_file.read_text(encoding="utf-8") if known else "{}"
                self.groups = json.loads(text)
            return self.groups.get(nodeid, nodeid)

    return GroupScheduling(config, log)
