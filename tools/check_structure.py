#!/usr/bin/env python3
"""The structure rules of CONTRIBUTING.md, checked on the source tree.

    tools/check-structure.sh            (from the repository root)

Rules:
  1. A library's private headers (those that declare a namespace
     moesim::<lib>::internal, or are named *_internal.h) are included only
     from that library's folder and its tests (tests/<lib>/).
  2. tools/ holds the command line, not study logic: no file there over
     250 lines.
  3. No function over 120 lines (top-level functions and member functions
     defined out of line, in every .cc and .h outside build folders).
  4. studies/ takes structs and returns structs: no file there includes
     the command-line parser (<CLI/...>) or a header of tools/.
  5. The event core (sim/core/) stands alone: its files include project
     headers of sim/core/ and util/ only.

tools/structure_pending.txt lists what broke rules 2 and 3 when the check
was written, each with its size then: an entry may shrink but not grow, and
one that no longer breaks its rule must be removed from the list, so the
list only gets shorter. Anything not listed that breaks a rule fails.
Exit status: 0 clean, 1 a rule broken (each named on a line).
"""
import os
import re
import sys

FUNCTION_LIMIT = 120
TOOLS_FILE_LIMIT = 250
PENDING = "tools/structure_pending.txt"


def sources():
    for root, dirs, files in os.walk("."):
        dirs[:] = sorted(d for d in dirs
                         if not d.startswith(("build", ".")) and d != "node_modules")
        for name in sorted(files):
            if name.endswith((".cc", ".h")):
                yield os.path.relpath(os.path.join(root, name))


def strip(src):
    """The source with comments, string and character literals emptied and
    preprocessor lines blanked; newlines kept, so line numbers hold."""
    out = []
    i, n = 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * src.count("\n", i, j))
            i = j
            continue
        raw = re.match(r'R"([^(\s]{0,16})\(', src[i:i + 20])
        if raw:
            end = ")" + raw.group(1) + '"'
            j = src.find(end, i + len(raw.group(0)))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * src.count("\n", i, j))
            i = j
            continue
        c = src[i]
        if c == "'" and i > 0 and src[i - 1].isalnum() and i + 1 < n \
                and src[i + 1].isalnum():
            out.append(c)  # a digit separator: 1'000'000
            i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "\n".join("" if line.lstrip().startswith("#") else line
                     for line in "".join(out).split("\n"))


def functions(path):
    """(lines, first line, name) of each function body in `path`."""
    text = strip(open(path, encoding="utf-8").read())
    found, stack, head, line = [], [], "", 1
    for c in text:
        if c == "\n":
            line += 1
        if c == "{":
            h = head.strip()
            if re.match(r"^(namespace\b|extern\b)", h):
                kind = "scope"
            elif re.search(r"\b(class|struct|enum|union)\b[^(]*$", h):
                kind = "scope"
            elif ("(" in h and not h.endswith("=")
                  and not re.match(r"^(if|for|while|switch|do|else)\b", h)
                  and (not stack or stack[-1][0] == "scope")):
                kind = "function"
            else:
                kind = "block"
            stack.append((kind, line, h))
            head = ""
        elif c == "}":
            if stack:
                kind, first, h = stack.pop()
                if kind == "function":
                    names = re.findall(r"([\w:~]+)\s*\(", h)
                    found.append((line - first + 1, first,
                                  names[0] if names else h[:40]))
            head = ""
        elif c == ";":
            head = ""
        else:
            head += c
    return found


def private_headers(paths):
    private = {}
    for path in paths:
        if not path.endswith(".h"):
            continue
        text = open(path, encoding="utf-8").read()
        if path.endswith("_internal.h") or re.search(
                r"^namespace moesim::\w+::internal\b", text, re.M):
            private[path] = path.split(os.sep)[0]
    return private


def main():
    paths = list(sources())
    problems, seen = [], set()
    pending = {}
    if os.path.exists(PENDING):
        for raw in open(PENDING, encoding="utf-8"):
            raw = raw.split("#", 1)[0].split()
            if len(raw) >= 3:
                pending[(raw[0], raw[1], " ".join(raw[2:-1]) or "-")] = int(raw[-1])

    def breaks(kind, path, name, size, limit, what):
        key = (kind, path, name)
        seen.add(key)
        if key not in pending:
            problems.append(f"{path}: {what} is {size} lines (at most {limit})")
        elif size > pending[key]:
            problems.append(f"{path}: {what} grew to {size} lines ({PENDING} "
                            f"lists {pending[key]}; at most {limit})")

    private = private_headers(paths)
    for path in paths:
        top = path.split(os.sep)[0]
        owner = path.split(os.sep)[1] if top == "tests" else top
        for n, include in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(r'\s*#include "([^"]+)"', include)
            if m and m.group(1) in private and private[m.group(1)] != owner:
                problems.append(f"{path}:{n}: includes {m.group(1)}, private "
                                f"to {private[m.group(1)]}/")
        if top == "studies":
            for n, include in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#include [<"]((CLI|tools)/[^>"]+)[>"]',
                             include)
                if m:
                    problems.append(f"{path}:{n}: includes {m.group(1)}; "
                                    "studies/ has no command line")
        if path.startswith(os.path.join("sim", "core") + os.sep):
            for n, include in enumerate(open(path, encoding="utf-8"), 1):
                m = re.match(r'\s*#include "([^"]+)"', include)
                if m and not m.group(1).startswith(("sim/core/", "util/")):
                    problems.append(f"{path}:{n}: includes {m.group(1)}; "
                                    "the event core includes sim/core/ and "
                                    "util/ only")
        if top == "tools" and path.endswith(".cc"):
            lines = sum(1 for _ in open(path, encoding="utf-8"))
            if lines > TOOLS_FILE_LIMIT:
                breaks("file", path, "-", lines, TOOLS_FILE_LIMIT,
                       "the command file")
        for size, first, name in functions(path):
            if size > FUNCTION_LIMIT:
                breaks("function", path, name, size, FUNCTION_LIMIT,
                       f"{name} (line {first})")
    for key in sorted(set(pending) - seen):
        problems.append(f"{PENDING}: {' '.join(key)} keeps its rule now; "
                        "remove it from the list")
    for problem in problems:
        print("check-structure: " + problem)
    left = len(seen & set(pending))
    print(f"check-structure: {len(problems)} broken, {left} pending in "
          f"{PENDING}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
