#!/usr/bin/env python3
"""Every relative link of README.md and docs/*.md leads somewhere: the file exists, and an
anchor (#...) names a heading of that Markdown file (GitHub's slugs). The README's reference
text moved to docs/ (issue 25); a link left pointing at a README section that is gone fails here.
It also checks that the README links every docs page, so no page is orphaned.

  docs_links_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def prose(text):
    """The lines outside fenced code blocks."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)  # GitHub keeps letters, digits, '_', '-' and spaces
    return s.replace(" ", "-")


def anchors(path):
    seen, result = {}, set()
    for line in prose(path.read_text()):
        m = re.match(r"(#{1,6}) (.*)", line)
        if not m:
            continue
        base = slug(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def main():
    src = pathlib.Path(sys.argv[1]).resolve()
    docs = [src / "README.md"] + sorted((src / "docs").glob("*.md"))
    failures, links = [], 0
    cache = {}
    for doc in docs:
        for number, line in enumerate(prose(doc.read_text()), 1):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                    continue
                links += 1
                path, _, anchor = target.partition("#")
                dest = (doc.parent / path).resolve() if path else doc
                where = f"{doc.relative_to(src)}: link '{target}'"
                if not dest.exists():
                    failures.append(f"{where}: {path} does not exist")
                    continue
                if anchor and dest.suffix == ".md":
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if anchor not in cache[dest]:
                        failures.append(f"{where}: no heading '#{anchor}' in "
                                        f"{dest.relative_to(src)}")
    readme = (src / "README.md").read_text()
    for page in sorted((src / "docs").glob("*.md")):
        if f"docs/{page.name}" not in readme:
            failures.append(f"README.md does not link docs/{page.name}")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    if failures:
        return 1
    print(f"docs links: {links} relative links in {len(docs)} documents resolve; "
          f"the README links every docs page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
