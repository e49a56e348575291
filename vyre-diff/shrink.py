#!/usr/bin/env python3
"""Reduce a failing case of the differential run to a smaller one that
still fails, then (with --save) keep it in regressions.txt.

    python3 vyre-diff/shrink.py 17            # seed 17
    python3 vyre-diff/shrink.py 17/d2 --save  # go on from a partly shrunk case

Each step builds the current case and every single edit of it (see
src/grammar/edit.rs) in one build, runs them, and moves to the first edit
that still fails (the edits come most-shrinking first: dropping nodes,
then fewer sizes, simpler values, plainer spellings). It stops when no
edit fails. Any difference counts as failing, not only the first one's
mode. `--save` keeps the reduced case's module, as the build wrote it, in
vyre-diff/regressions/, which every build checks. Run from the workspace
root.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "debug", "vyre-diff")


def build(cases):
    """Builds `cases`; those that do not compile (an edit the generator got
    wrong: a bug of vyre-diff, printed) are left out. The cases built."""
    env = dict(os.environ, VYRE_DIFF_CASES=" ".join(cases))
    cmd = ["cargo", "build", "-q", "-p", "vyre-diff"]
    if subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True).returncode == 0:
        return cases
    good = [c for c in cases if subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, VYRE_DIFF_CASES=c),
                                                capture_output=True).returncode == 0]
    for c in set(cases) - set(good):
        print(f"left out (does not compile; a generator bug): {c}", flush=True)
    env["VYRE_DIFF_CASES"] = " ".join(good)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    return good


def candidates(case):
    out = subprocess.run([BIN, "--candidates"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name, _, edits = line.partition(": ")
        if name == case:
            return edits.split()
    return []


def failing():
    run = subprocess.run([BIN], cwd=ROOT, capture_output=True, text=True)
    m = re.search(r"^failing cases: (.*)$", run.stdout, re.M)
    return set(m.group(1).split()) if m else set(), run.stdout


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    case = sys.argv[1] if sys.argv[1].startswith("s") else "s" + sys.argv[1]
    build([case])
    failed, log = failing()
    if case not in failed:
        sys.exit(f"{case} does not fail here; nothing to shrink")
    while True:
        edits = candidates(case)
        tries = [f"{case}/{e}" for e in edits]
        if not tries:
            break
        tries = [t for t in build([case] + tries) if t != case]
        failed, log = failing()
        nxt = next((t for t in tries if t in failed), None)
        if nxt is None:
            break
        print(f"still fails: {nxt}", flush=True)
        case = nxt
    build([case])
    _, log = failing()
    print(log)
    print(f"reduced: {case}")
    if "--save" in sys.argv:
        # The module as the build wrote it, frozen: a later change of the
        # generator cannot change what the regression checks.
        module = "case_" + re.sub(r"[^A-Za-z0-9]", "_", case)
        found = sorted(
            glob.glob(os.path.join(ROOT, "target", "debug", "build", "vyre-diff-*", "out", "cases", module + ".rs")),
            key=os.path.getmtime,
        )
        if not found:
            sys.exit(f"no module {module}.rs in the build folder")
        name = "regress_" + re.sub(r"[^A-Za-z0-9]", "_", case)
        dest = os.path.join(ROOT, "vyre-diff", "regressions", name + ".rs")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(found[-1]) as src, open(dest, "w") as out:
            out.write(src.read())
        print(f"kept as {os.path.relpath(dest, ROOT)}")


if __name__ == "__main__":
    main()
