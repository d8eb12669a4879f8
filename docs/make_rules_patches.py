"""Write the patch catalogue of docs/rules.md (rule 10.3) from patchwork_env.data.patches.

The catalogue is the part of the page between the two marker lines below; the rest of the
page is written by hand. ``--check`` rewrites nothing and exits with status 1 when the page
differs from what the data would give, so the page cannot drift from the patches the engine
plays with.

    python docs/make_rules_patches.py [--check] [--page PATH]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from patchwork_env.data.patches import LEATHER, PATCHES, Patch
from patchwork_env.files.atomic import write_text

PAGE = Path(__file__).with_name("rules.md")
START = "<!-- patch catalogue: start (written by docs/make_rules_patches.py) -->"
END = "<!-- patch catalogue: end -->"
PER_ROW = 6
"""Pictures side by side in one row of the picture block."""
GAP = 3


def picture(patch: Patch) -> list[str]:
    """The shape of ``patch`` in orientation 0, ``#`` for a covered cell, ``.`` for a hole."""
    return [row.replace("X", "#") for row in patch.shape.split("/")]


def table(patches: tuple[Patch, ...]) -> list[str]:
    """The catalogue as a Markdown table, one patch a row."""
    lines = [
        "| id | shape | cells | cost | time | income | orientations |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    for p in patches:
        lines.append(f"| {p.id} | `{p.shape}` | {p.size} | {p.cost} | {p.time} | {p.income} "
                     f"| {len(p.canonical_orientations)} |")
    return lines


def totals(patches: tuple[Patch, ...]) -> str:
    """One sentence with the sums of the columns."""
    return (f"All {len(patches)} together: {sum(p.size for p in patches)} cells, cost "
            f"{sum(p.cost for p in patches)}, time {sum(p.time for p in patches)}, income "
            f"{sum(p.income for p in patches)}. The leather patch (id {LEATHER.id}) is a "
            f"single cell with cost {LEATHER.cost}, time {LEATHER.time} and income "
            f"{LEATHER.income}.")


def pictures(patches: tuple[Patch, ...]) -> list[str]:
    """Every shape drawn as text, :data:`PER_ROW` to a row, each under its id and numbers."""
    lines = ["```text"]
    for first in range(0, len(patches), PER_ROW):
        group = patches[first:first + PER_ROW]
        captions = [f"{p.id}: {p.cost}/{p.time}/{p.income}" for p in group]
        drawings = [picture(p) for p in group]
        width = max(len(c) for c in captions)
        height = max(len(d) for d in drawings)
        rows = [captions] + [[d[r] if r < len(d) else "" for d in drawings]
                             for r in range(height)]
        for row in rows:
            lines.append((" " * GAP).join(cell.ljust(width) for cell in row).rstrip())
        lines.append("")
    lines[-1] = "```"
    return lines


def catalogue() -> str:
    """The text between the markers."""
    lines = [
        "Each picture is the patch in orientation 0, `#` a covered cell; the caption reads",
        "`id: cost/time/income`.",
        "",
        *pictures(PATCHES),
        "",
        *table(PATCHES),
        "",
        totals(PATCHES),
    ]
    return "\n".join(lines)


def rewrite(text: str) -> str:
    """``text`` with the block between the markers replaced by the current catalogue."""
    if text.count(START) != 1 or text.count(END) != 1:
        raise ValueError(f"the page must hold each catalogue marker once: {START!r}, {END!r}")
    head, rest = text.split(START)
    _, tail = rest.split(END)
    return f"{head}{START}\n{catalogue()}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page, or with ``--check`` return 1 when it is stale."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the page is stale instead of rewriting it")
    parser.add_argument("--page", type=Path, default=PAGE, help="the rules page")
    args = parser.parse_args(argv)
    text = args.page.read_text(encoding="utf-8")
    try:
        new = rewrite(text)
    except ValueError as e:
        parser.error(f"{args.page}: {e}")
    if args.check:
        if new != text:
            print(f"{args.page} is stale: run python docs/make_rules_patches.py",
                  file=sys.stderr)
            return 1
        return 0
    if new != text:
        write_text(args.page, new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
