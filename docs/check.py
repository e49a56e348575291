#!/usr/bin/env python3
"""Checks the documentation: links, and the Rust programs in it.

    python3 docs/check.py links      # every relative link and #anchor resolves
    python3 docs/check.py snippets   # every complete Rust program compiles and runs
    python3 docs/check.py            # both

`links` reads README.md, bench/README.md and docs/*.md. A relative link
must name a file or folder that exists; a `#fragment` must be a heading of
the target Markdown file (GitHub's anchor rules). External links
(http, https, mailto) are not fetched.

`snippets` first checks that every ```rust block (a program or a
fragment) names only crates that a crate depending on `vyre-graph` alone
has: `bytemuck`, `wgpu`, `half` and `pollster`'s `block_on` through
`vyre_graph::` (the workspace's own examples depend on them directly, so a
build here would not notice). Then it takes every ```rust block of those
pages that has a
`fn main(` at the start of a line: a complete program. Each becomes a module of one temporary
example, examples/zz_docs_check.rs, whose `main` runs them in turn; the
example is built and run with `cargo run --example zz_docs_check`, then
removed. A snippet's `main` returns `()` or a `Result` whose error is
`Debug`; it fails by returning an error or panicking (the snippets assert
their results against a CPU reference). Blocks marked ```rust,ignore or
```text are fragments and are not checked. Set XDG_RUNTIME_DIR to a 0700
folder to keep Mesa quiet.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLE = ROOT / "examples" / "zz_docs_check.rs"

FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text):
    """(line number, line) of every line outside fenced code blocks."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            marker = m.group(2)
            if fence is None:
                fence = marker[0] * len(marker)
                continue
            if marker.startswith(fence) and not m.group(3).strip():
                fence = None
                continue
        if fence is None:
            yield number, line


def slug(heading):
    """GitHub's anchor for a heading: lower case, inline code and links
    reduced to their text, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    result = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def check_links():
    problems = []
    checked = 0
    cache = {}
    for page in PAGES:
        if not page.exists():
            continue
        for number, line in prose_lines(page.read_text(encoding="utf-8")):
            # Inline code may hold `[..](..)` that is not a link.
            line = re.sub(r"`[^`]*`", "``", line)
            for m in LINK.finditer(line):
                target = m.group(3)
                if re.match(r"^[a-z]+:", target):
                    continue
                checked += 1
                where = f"{page.relative_to(ROOT)}:{number}"
                path_part, _, fragment = target.partition("#")
                dest = (page.parent / path_part).resolve() if path_part else page
                if not dest.exists():
                    problems.append(f"{where}: `{target}`: no file {dest.relative_to(ROOT) if dest.is_relative_to(ROOT) else dest}")
                    continue
                if fragment:
                    if dest.suffix != ".md":
                        problems.append(f"{where}: `{target}`: an anchor into a file that is not Markdown")
                        continue
                    if dest not in cache:
                        cache[dest] = anchors(dest)
                    if fragment not in cache[dest]:
                        problems.append(f"{where}: `{target}`: no heading `#{fragment}` in {dest.relative_to(ROOT)}")
    for p in problems:
        print(p)
    print(f"links: {checked} relative links checked, {len(problems)} broken")
    return not problems


def snippets():
    """(page, line, code) of every complete Rust program in the pages."""
    found = []
    for page in PAGES:
        if not page.exists():
            continue
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if m and m.group(3).strip() == "rust":
                start = i + 1
                j = start
                while j < len(lines) and not lines[j].strip().startswith(m.group(2)):
                    j += 1
                code = "\n".join(lines[start:j])
                if re.search(r"^fn main\(", code, re.M):
                    found.append((page.relative_to(ROOT), start + 1, code))
                i = j + 1
            else:
                i += 1
    return found


# Crates the workspace's root package depends on directly but a user's
# crate with only `vyre-graph` does not: a program must reach them through
# `vyre_graph::` (which re-exports all but `pollster`, whose `block_on` is
# `vyre_graph::block_on`).
NOT_A_USERS_DEPENDENCY = ("bytemuck", "half", "pollster", "wgpu", "rayon", "smallvec")


def foreign_crates(code):
    """The crates of NOT_A_USERS_DEPENDENCY that `code` names directly
    rather than through `vyre_graph::` (or a `use vyre_graph::..` that
    brings the name in)."""
    code = re.sub(r"//[^\n]*", "", code)  # comments may name anything
    imported = " ".join(re.findall(r"\buse\s+vyre_graph::[^;]*;", code))
    found = []
    for crate in NOT_A_USERS_DEPENDENCY:
        if re.search(r"\b" + crate + r"\b", imported):
            continue
        if re.search(r"(?<![\w:])" + crate + r"::", code) or re.search(r"\buse\s+" + crate + r"\b", code):
            found.append(crate)
    return found


def rust_blocks():
    """(page, line, code) of every ```rust block, fragments included."""
    found = []
    for page in PAGES:
        if not page.exists():
            continue
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            m = FENCE.match(lines[i])
            if m and m.group(3).strip().split(",")[0] == "rust":
                j = i + 1
                while j < len(lines) and not lines[j].strip().startswith(m.group(2)):
                    j += 1
                found.append((page.relative_to(ROOT), i + 2, "\n".join(lines[i + 1 : j])))
                i = j + 1
            else:
                i += 1
    return found


def check_snippets():
    foreign = [(page, line, crates) for page, line, code in rust_blocks() if (crates := foreign_crates(code))]
    for page, line, crates in foreign:
        names = ", ".join(f"`{c}`" for c in crates)
        print(f"{page}:{line}: names {names} directly; a crate that depends on vyre-graph alone has no such "
              f"dependency: write `vyre_graph::{crates[0]}` (`vyre_graph::block_on` for pollster's)")
    found = snippets()
    modules = []
    calls = []
    for k, (page, line, code) in enumerate(found):
        # Only the Rust `main` at the start of a line: a WGSL entry point
        # called `main` is indented inside the graph.
        body = re.sub(r"^fn main\(", "pub fn main(", code, flags=re.M)
        modules.append(f"// {page}:{line}\n#[allow(dead_code, unused_imports)]\nmod s{k} {{\n{body}\n}}\n")
        calls.append(f'    ok &= outcome("{page}:{line}", std::panic::catch_unwind(s{k}::main));')
    source = (
        "//! Generated by docs/check.py from the documentation's Rust programs; not committed.\n\n"
        + "\n".join(modules)
        + """
trait Outcome {
    fn failure(self) -> Option<String>;
}
impl Outcome for () {
    fn failure(self) -> Option<String> {
        None
    }
}
impl<E: std::fmt::Debug> Outcome for Result<(), E> {
    fn failure(self) -> Option<String> {
        self.err().map(|e| format!("{e:?}"))
    }
}

fn outcome<T: Outcome>(place: &str, result: std::thread::Result<T>) -> bool {
    match result.map(Outcome::failure) {
        Ok(None) => {
            println!("ok     {place}");
            true
        }
        Ok(Some(e)) => {
            println!("FAILED {place}: {e}");
            false
        }
        Err(_) => {
            println!("FAILED {place}: panicked");
            false
        }
    }
}

fn main() -> std::process::ExitCode {
    let mut ok = true;
"""
        + "\n".join(calls)
        + """
    if ok { std::process::ExitCode::SUCCESS } else { std::process::ExitCode::FAILURE }
}
"""
    )
    EXAMPLE.write_text(source, encoding="utf-8")
    try:
        env = dict(os.environ)
        env.setdefault("XDG_RUNTIME_DIR", "/tmp/vyre-xdg")
        result = subprocess.run(
            ["cargo", "run", "-q", "--example", EXAMPLE.stem], cwd=ROOT, env=env
        )
    finally:
        if os.environ.get("DOCS_CHECK_KEEP") != "1":
            EXAMPLE.unlink(missing_ok=True)
    print(f"snippets: {len(found)} programs, {'all ran' if result.returncode == 0 else 'FAILED'}; "
          f"{len(foreign)} blocks name a crate a user's crate does not have")
    return result.returncode == 0 and not foreign


def check_architecture():
    """Every folder and file of the macro's and the runtime's sources is
    named in docs/architecture.md (a file by its name in its folder's row,
    a folder as `name/`), so that the page says where everything is."""
    page = open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8").read()
    missing = []
    for crate in ["vyre-macros", "vyre-graph"]:
        src = os.path.join(ROOT, crate, "src")
        for folder, dirs, files in os.walk(src):
            rel = os.path.relpath(folder, src)
            if rel != "." and f"{os.path.basename(folder)}/" not in page:
                missing.append(f"{crate}/src/{rel}/")
            for f in files:
                if f.endswith(".rs") and f"`{f}`" not in page and f"{rel}/{f}" not in page:
                    missing.append(f"{crate}/src/{os.path.join(rel, f)}".replace("/./", "/"))
    for m in missing:
        print(f"docs/architecture.md does not name {m}: add it to its stage's or layer's row")
    print(f"architecture: {'every file named' if not missing else f'{len(missing)} not named'}")
    return not missing


def main():
    what = sys.argv[1:] or ["links", "snippets", "architecture"]
    ok = True
    for w in what:
        if w == "links":
            ok &= check_links()
        elif w == "snippets":
            ok &= check_snippets()
        elif w == "architecture":
            ok &= check_architecture()
        else:
            print(f"unknown check `{w}`: use `links`, `snippets` or `architecture`", file=sys.stderr)
            return 2
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
