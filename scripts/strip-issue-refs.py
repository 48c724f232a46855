#!/usr/bin/env python3
"""Removes issue-number references from comments in src/ (and README pointers become docs pages).

A comment should stand on its own: "(#15)", "(issue 14, point 3)", ", #18)" and the like are
dropped, and "(README: Isolation)" names the page that now holds the section. Only comment text
is touched: whole comment lines (//, /*, *) and the part of a code line after " // ". Safe to run
again after a merge: it changes nothing that is already clean.

    python3 scripts/strip-issue-refs.py [paths...]   (default: src)
"""
import os
import re
import sys

REF = r"(?:#\d+|[Ii]ssues? \d+)(?:, point \d+)?"
RULES = [
    (re.compile(r"(?<=[^\s*/])[ \t]*\(" + REF + r"\)"), ""),  # "a task (#15)." -> "a task."
    (re.compile(r"\(" + REF + r"(?:, |: )"), "("),  # "(#14, three long calls" -> "(three long calls"
    (re.compile(r",\s*" + REF + r"\)"), ")"),  # "(an HTTP upstream, #15)" -> "(an HTTP upstream)"
    (re.compile(r"\(" + REF + r":\s*$"), "("),  # "(#16:" at a line's end
    (re.compile(r"^(\s*\*) \(" + REF + r"\) "), r"\1 "),  # " * (issue 17) while" -> " * while"
]
README_PAGES = [
    (re.compile(r"README:? \"?Isolation\"?"), "docs/operations/isolation.md"),
    (re.compile(r"README:? \"?[Uu]pstream generations\"?"), "docs/concepts/upstreams.md"),
    (re.compile(r"README \"Security\""), "docs/operations/capacity.md, Limits"),
    (re.compile(r"README, Upstream credentials"), "docs/operations/security.md, Upstream credentials"),
    (re.compile(r"README, MRTR"), "docs/concepts/tasks.md, MRTR"),
    (re.compile(r"README: MRTR"), "docs/concepts/tasks.md, MRTR"),
    (re.compile(r"README \"Recipes\": behind a timeout"), "docs/guides/behind-a-timeout.md"),
    (re.compile(r"README: Observability"), "docs/reference/metrics.md"),
    (re.compile(r"README \"Recipes\": retrofit a legacy stdio server"), "docs/guides/retrofit-stdio.md: retrofit a legacy stdio server"),
    (re.compile(r"README \"Recipes\": an ops-managed sidecar"), "docs/guides/kubernetes-sidecar.md: an ops-managed sidecar"),
    (re.compile(r"README \"Recipes\": a hop"), "docs/guides/behind-a-timeout.md: a hop"),
    (re.compile(r"README, errors table"), "docs/reference/errors.md"),
    (re.compile(r"README, failure table"), "docs/operations/failure-modes.md"),
    (re.compile(r"README \"Limits\""), "docs/operations/capacity.md, Limits"),
]
COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*)")


def clean(comment: str) -> str:
    for pattern, replacement in README_PAGES + RULES:
        comment = pattern.sub(replacement, comment)
    return comment


def fix_line(line: str) -> str:
    if COMMENT_LINE.match(line):
        return clean(line)
    at = line.find(" // ")
    if at >= 0 and line.count('"', 0, at) % 2 == 0 and line.count("`", 0, at) % 2 == 0:
        return line[:at] + clean(line[at:])
    return line


def main(paths: list[str]) -> None:
    changed = 0
    for root in paths:
        files = [root] if os.path.isfile(root) else [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
        for path in files:
            if not path.endswith((".ts", ".mjs", ".js")):
                continue
            with open(path, encoding="utf8") as f:
                text = f.read()
            new = "".join(fix_line(line) for line in text.splitlines(keepends=True))
            if new != text:
                with open(path, "w", encoding="utf8") as f:
                    f.write(new)
                changed += 1
    print(f"{changed} files changed")


if __name__ == "__main__":
    main(sys.argv[1:] or ["src"])
