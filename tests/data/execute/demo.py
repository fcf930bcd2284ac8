"""
# A page with examples

Each example below records that it ran, in `ran.log` in the working folder,
so that the tests can count executions.
"""

from pathlib import Path

from helper import double

LOG = Path("ran.log")


def note(name: str) -> None:
    """Record that the example `name` ran."""
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(name + "\n")


# A table, printed.


def table() -> None:
    note("table")
    print("| n | 2n |")
    print("|---|---|")
    for n in range(3):
        print(f"| {n} | {double(n)} |")


#| table()

# A value: shown as its `repr`, like a notebook cell shows it.


def square(n: int) -> int:
    note("square")
    return n * n


#| square(7)
#| square(8);

# A figure.


def plot() -> None:
    note("plot")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [0, 1, 4])
    ax.set_title("squares")


#| plot()  | alt: a curve rising from 0 to 4

# Paths of the build machine never reach the page.


def where() -> str:
    note("where")
    print(Path.cwd() / "demo.py")
    return str(Path.home() / "notes.txt")


#| where()

# A data file: the example re-runs when the file changes.


def numbers() -> int:
    note("numbers")
    return sum(int(n) for n in Path("numbers.txt").read_text().split())


#| numbers()
#| notebook: print("only in the notebook")

if __name__ == "__main__":
    table()
