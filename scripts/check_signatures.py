#!/usr/bin/env python3
"""House rule (ARCHITECTURE.md, issue 44): no public function of the workspace takes more than
four arguments besides `self`; longer lists become settings structs or builders.

Reads every `.rs` file under the workspace (not `target/`), finds `pub` and `pub(crate)`
functions, counts their parameters at the top level of the parameter list (closures' and
generics' commas excluded) and prints each one over the limit with its file and line. Exits 1
when there is any. A `#[pyfunction]` is exempt: its parameters are Python keywords (with
defaults), gathered into a settings struct at once.

    python3 scripts/check_signatures.py [ROOT]
"""

import pathlib
import re
import sys

LIMIT = 4
FN = re.compile(r"\bpub(?:\((?:crate|super)\))?\s+(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)\s*(?:<[^(]*?>)?\s*\(")
SELF = re.compile(r"^(?:&\s*(?:'\w+\s+)?)?(?:mut\s+)?self\b")


def parameters(text: str, start: int) -> list[str]:
    """The top-level parameters of the list opening at `start` (just after its `(`)."""
    depth, i, current, out = 1, start, "", []
    while i < len(text):
        c = text[i]
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            # `->` inside a parameter's type (`impl Fn(u8) -> u8`) is not a closing bracket.
            if not (c == ">" and text[i - 1] == "-"):
                depth -= 1
            if depth == 0:
                break
        if c == "," and depth == 1:
            out.append(current)
            current = ""
        else:
            current += c
        i += 1
    out.append(current)
    return [p.strip() for p in out if p.strip()]


def long_signatures(root: pathlib.Path):
    for path in sorted(root.rglob("*.rs")):
        rel = path.relative_to(root)
        if rel.parts[0] == "target" or "target" in rel.parts[:-1]:
            continue
        text = path.read_text(encoding="utf-8")
        for m in FN.finditer(text):
            before = text[: m.start()].rstrip().splitlines()[-3:]
            if any("#[pyfunction]" in line or "#[pyo3(signature" in line for line in before):
                continue
            params = [p for p in parameters(text, m.end()) if not SELF.match(p)]
            if len(params) > LIMIT:
                yield rel, text.count("\n", 0, m.start()) + 1, m.group(1), len(params)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    found = list(long_signatures(root))
    for rel, line, name, n in found:
        print(f"{rel}:{line}: pub fn {name} takes {n} arguments (at most {LIMIT} besides self): use a settings struct or a builder")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
