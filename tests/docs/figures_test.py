#!/usr/bin/python3
"""docs_figures: a figure the docs state in prose comes from a table, never typed twice (issue 43
item 9: README and docs/engines-ncnn.md said 5 of 16 corpus models run on ncnn after opt while
the test held 8 of 21).

Each corpus table below is the engine test's own output (tests/e2e/<engine>_corpus_test.cc
prints it; BCAST_ENGINES_TABLE=FILE writes it, and the test fails when its summary line
differs from the page's). This check reads the table on its page, counts its rows and the rows
that run and match before and after opt, and asserts that
- the rows are the corpus (tests/fixtures/exported/manifest.json), one per model;
- the summary line under the table gives those counts;
- every place that states them in prose (CLAIMS: README, other pages) gives the same numbers.
A claim's pattern that no longer matches fails too (the sentence moved or was reworded: update
CLAIMS), so that a figure cannot leave the check by being rephrased.

Usage: figures_test.py ROOT"""
import json
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1])

# Per corpus table: its page, the first cells of its header row, the columns (0-based, model
# first) holding the verdict as exported and after opt, the summary line's pattern, and the
# prose claims (file, pattern with named groups among before, after, n).
TABLES = [
    dict(
        name="ncnn corpus",
        page="docs/engines-ncnn.md",
        header="| model | dims | as exported | after `opt --target ncnn` |",
        before_col=2, after_col=3,
        summary=r"runs and matches: (?P<before>\d+) of (?P<n>\d+) as exported, "
                r"(?P<after>\d+) of (?P=n) after opt",
        claims=[
            ("README.md", r"the corpus: (?P<before>\d+) of (?P<n>\d+) models run as exported, "
                          r"(?P<after>\d+) of (?P=n) after `opt --target ncnn`"),
        ],
    ),
    dict(
        name="opencv corpus",
        page="docs/engines.md",
        header="| model | dims | as exported |",
        before_col=2, after_col=4,
        summary=r"\*\*Runs and matches: (?P<before>\d+) of (?P<n>\d+) as exported, "
                r"(?P<after>\d+) of (?P=n) after opt\*\*",
        claims=[
            ("docs/cli-probe-engine.md", r"(?P<before>\d+) of (?P<n>\d+) models load and match "
                                         r"on OpenCV 4\.6 as exported, (?P<after>\d+)\s+after opt"),
            ("docs/engines.md", r"The test holds the (?P<after>\d+) by name"),
        ],
    ),
]


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


def table_rows(text, header):
    """The body rows (lists of cells) of the first table whose header row starts with
    `header`, or None."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return rows
    return None


def runs(cell):
    return cell.replace("*", "").startswith("runs and matches")


def check(t, corpus, failures):
    text = read(t["page"])
    rows = table_rows(text, t["header"])
    if rows is None:
        failures.append(f"{t['name']}: {t['page']} has no table starting '{t['header']}'")
        return
    models = [r[0] for r in rows]
    figures = {"n": len(rows), "before": sum(runs(r[t["before_col"]]) for r in rows),
               "after": sum(runs(r[t["after_col"]]) for r in rows)}
    missing, extra = sorted(corpus - set(models)), sorted(set(models) - corpus)
    if missing or extra or len(models) != len(set(models)):
        failures.append(f"{t['name']}: the table of {t['page']} is not the corpus of "
                        f"manifest.json ({len(corpus)} models): missing {missing}, not in the "
                        f"corpus {extra}; regenerate it from the test (BCAST_ENGINES_TABLE)")
    stated = [(t["page"], t["summary"])] + t["claims"]
    for rel, pattern in stated:
        found = list(re.finditer(pattern, read(rel)))
        if not found:
            failures.append(f"{t['name']}: {rel} no longer states the figure /{pattern}/ "
                            "(reworded or moved: update CLAIMS in tests/docs/figures_test.py)")
        for m in found:
            for key, value in m.groupdict().items():
                if int(value) != figures[key]:
                    failures.append(f"{t['name']}: {rel} says '{m.group(0)}' ({key} = {value}), "
                                    f"the table of {t['page']} gives {key} = {figures[key]}")
    return figures


def main():
    corpus = set(json.loads(read("tests/fixtures/exported/manifest.json")))
    failures = []
    for t in TABLES:
        figures = check(t, corpus, failures)
        if figures:
            print(f"docs_figures: {t['name']}: {figures['before']} of {figures['n']} as exported, "
                  f"{figures['after']} of {figures['n']} after opt ({t['page']})")
    for f in failures:
        print(f"docs_figures: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
