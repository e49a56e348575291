#!/usr/bin/env python3
"""The differential soak: new random seeds for as long as asked.

    python3 vyre-diff/soak.py SECONDS [--batch 40] [--rounds-for 300] [--first SEED] [--out FILE]

Builds batches of `--batch` consecutive seeds (from `--first`, default a
random one), runs each batch for `--rounds-for` seconds in one process
(`vyre-diff --soak`: round after round, new inputs and middle sizes each
round), and goes on until SECONDS have passed. Prints and writes (JSON
lines, `--out`, default target/vyre-diff-soak.jsonl) one record per round:
time, seeds, graphs and runs so far, failures, the process's resident
memory and GpuCounters::live_buffer_bytes, so that both can be seen to stay
flat. Failing cases are listed at the end; shrink each with shrink.py.
Run from the workspace root.
"""
import json
import os
import random
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "debug", "vyre-diff")


def arg(name, default):
    if name in sys.argv:
        return type(default)(sys.argv[sys.argv.index(name) + 1])
    return default


def main():
    if len(sys.argv) < 2 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    total = int(sys.argv[1])
    batch = arg("--batch", 40)
    per = arg("--rounds-for", 300)
    seed = arg("--first", random.randrange(1_000, 1_000_000_000))
    out = arg("--out", os.path.join(ROOT, "target", "vyre-diff-soak.jsonl"))
    start = time.time()
    graphs = runs = 0
    failing = set()
    with open(out, "w") as log:
        while time.time() - start < total:
            seeds = f"{seed}..{seed + batch}"
            env = dict(os.environ, VYRE_DIFF_SEEDS=seeds)
            built = time.time()
            subprocess.run(["cargo", "build", "-q", "-p", "vyre-diff"], cwd=ROOT, env=env, check=True)
            left = max(1, min(per, int(total - (time.time() - start))))
            proc = subprocess.Popen([BIN, "--soak", str(left)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
            base = (graphs, runs)
            for line in proc.stdout:
                m = re.match(r"round (\d+) t=([\d.]+)s graphs=(\d+) runs=(\d+) failures=(\d+) rss_kib=(\d+) live_buffer_bytes=(\d+)", line)
                if m:
                    r = dict(zip(["round", "t", "graphs", "runs", "failures", "rss_kib", "live_buffer_bytes"], map(float, m.groups())))
                    graphs, runs = base[0] + int(r["graphs"]), base[1] + int(r["runs"])
                    rec = {"elapsed_s": round(time.time() - start, 1), "seeds": seeds, "build_s": None, **r,
                           "graphs_total": graphs, "runs_total": runs}
                    log.write(json.dumps(rec) + "\n")
                    log.flush()
                    print(json.dumps(rec), flush=True)
                m = re.match(r"failing cases: (.*)", line)
                if m:
                    failing.update(m.group(1).split())
            proc.wait()
            print(f"batch {seeds}: built in {built and round(time.time() - built)} s", flush=True)
            seed += batch
    minutes = (time.time() - start) / 60
    print(f"soak: {graphs} graph checks, {runs} runs in {minutes:.1f} min "
          f"({graphs / minutes:.1f} graphs/min, {runs / minutes:.0f} runs/min); failing cases: {' '.join(sorted(failing)) or 'none'}")
    sys.exit(1 if failing else 0)


if __name__ == "__main__":
    main()
