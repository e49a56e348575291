#!/usr/bin/env python3
"""Draw a Chrome trace / Perfetto JSON file (what `RunReport::write_trace`
and `Trace::write` write) as a timeline SVG: one row per track (process and
thread), complete events as labelled bars, nested events stacked below their
parent, a time axis in microseconds. Standard library only.

    python3 docs/pictures/trace_svg.py trace.json out.svg [--width 1400] [--from US] [--to US]

`--from`/`--to` draw a window of the timeline (microseconds from the start
of the trace). Hover a bar in a browser for its name, duration and args.
"""

import argparse
import colorsys
import hashlib
import json
import math
import sys
from xml.sax.saxutils import escape

LABEL_W = 250  # the column of track names
BAR_H = 18
ROW_GAP = 6
AXIS_H = 34
FONT = 11
CHAR_W = 6.3  # about, for an 11 px sans-serif font

PHASE_COLOURS = {
    "check": "#9ecae1",
    "plan": "#6baed6",
    "bind": "#fdae6b",
    "encode": "#fd8d3c",
    "submit": "#e6550d",
    "wait": "#d9d9d9",
    "copy-out": "#a1d99b",
}


def colour(name):
    if name in PHASE_COLOURS:
        return PHASE_COLOURS[name]
    if name.startswith("run "):
        return "#f0f0f0"
    if "(skipped)" in name:
        return "#eeeeee"
    base = name.split("[")[0].split(" #")[0]
    h = int(hashlib.md5(base.encode()).hexdigest()[:6], 16) / 0xFFFFFF
    r, g, b = colorsys.hls_to_rgb(h, 0.72, 0.55)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


def nice_step(span, target_ticks=10):
    raw = span / max(target_ticks, 1)
    mag = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def fmt_us(v):
    if abs(v) >= 1000:
        return f"{v / 1000:g} ms"
    return f"{v:g} µs"


def load(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    other = trace.get("otherData", {}) if isinstance(trace, dict) else {}
    return events, other


def tracks(events):
    """Rows: (pid, tid) -> name, in process order then sort index."""
    procs, threads, order = {}, {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key = (e.get("pid", 0), e.get("tid", 0))
        args = e.get("args", {})
        if e["name"] == "process_name":
            procs[key[0]] = args.get("name", str(key[0]))
        elif e["name"] == "thread_name":
            threads[key] = args.get("name", str(key[1]))
        elif e["name"] == "thread_sort_index":
            order[key] = args.get("sort_index", key[1])
    return procs, threads, order


def layout(bars):
    """Depth of each bar in its row: nested (contained) bars go below."""
    bars.sort(key=lambda b: (b["ts"], -b["dur"]))
    stack = []
    for b in bars:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= b["ts"] + 1e-9:
            stack.pop()
        b["depth"] = len(stack)
        stack.append(b)
    return max((b["depth"] for b in bars), default=0) + 1


def render(events, other, width, t_from, t_to):
    procs, threads, order = tracks(events)
    bars = [e for e in events if e.get("ph") == "X"]
    if not bars:
        sys.exit("no complete (\"ph\": \"X\") events in the trace")
    t0 = min(b["ts"] for b in bars)
    for b in bars:
        b["ts"] -= t0
    lo = t_from if t_from is not None else 0.0
    hi = t_to if t_to is not None else max(b["ts"] + b["dur"] for b in bars)
    bars = [b for b in bars if b["ts"] + b["dur"] >= lo and b["ts"] <= hi]
    rows = {}
    for b in bars:
        rows.setdefault((b.get("pid", 0), b.get("tid", 0)), []).append(b)
    keys = sorted(rows, key=lambda k: (k[0], order.get(k, k[1])))
    plot_w = width - LABEL_W - 20
    scale = plot_w / max(hi - lo, 1e-9)

    def x(t):
        return LABEL_W + (min(max(t, lo), hi) - lo) * scale

    out = []
    y = AXIS_H
    last_pid = None
    for key in keys:
        depth = layout(rows[key])
        h = depth * BAR_H
        if key[0] != last_pid:
            name = procs.get(key[0], f"process {key[0]}")
            out.append(
                f'<text x="6" y="{y + 13}" font-weight="bold">{escape(name)}</text>'
            )
            y += 20
            last_pid = key[0]
        label = threads.get(key, f"thread {key[1]}")
        shown = label if len(label) * CHAR_W < LABEL_W - 24 else label[: int((LABEL_W - 24) / CHAR_W) - 1] + "…"
        out.append(f'<rect x="0" y="{y - 2}" width="{width}" height="{h + 4}" fill="#fafafa"/>')
        out.append(
            f'<text x="16" y="{y + 13}"><title>{escape(label)}</title>{escape(shown)}</text>'
        )
        for b in rows[key]:
            bx, bw = x(b["ts"]), max(x(b["ts"] + b["dur"]) - x(b["ts"]), 0.8)
            by = y + b["depth"] * BAR_H
            args = ", ".join(f"{k}: {v}" for k, v in b.get("args", {}).items())
            tip = f'{b["name"]} — {b["dur"]:.3f} µs' + (f" ({args})" if args else "")
            out.append(
                f'<rect x="{bx:.2f}" y="{by}" width="{bw:.2f}" height="{BAR_H - 2}" '
                f'fill="{colour(b["name"])}" stroke="#555" stroke-width="0.4">'
                f"<title>{escape(tip)}</title></rect>"
            )
            text = b["name"]
            room = bw - 6
            if room > 4 * CHAR_W:
                if len(text) * CHAR_W > room:
                    text = text[: max(int(room / CHAR_W) - 1, 1)] + "…"
                out.append(
                    f'<text x="{bx + 3:.2f}" y="{by + 12}" pointer-events="none">{escape(text)}</text>'
                )
        y += h + ROW_GAP
    note_lines = [n for n in other.get("gpu_times", "").split("; ") if n]
    height = y + 16 + 15 * len(note_lines)
    # The axis, on top, with grid lines through every row.
    axis = [f'<line x1="{LABEL_W}" y1="{AXIS_H - 8}" x2="{width - 20}" y2="{AXIS_H - 8}" stroke="#333"/>']
    step = nice_step(hi - lo)
    t = math.ceil(lo / step) * step
    while t <= hi + 1e-9:
        tx = x(t)
        axis.append(f'<line x1="{tx:.2f}" y1="{AXIS_H - 12}" x2="{tx:.2f}" y2="{y}" stroke="#ddd"/>')
        axis.append(f'<text x="{tx:.2f}" y="{AXIS_H - 16}" text-anchor="middle">{fmt_us(round(t, 6))}</text>')
        t += step
    foot = "\n".join(
        f'<text x="6" y="{y + 14 + 15 * i}" fill="#555">{"GPU times: " if i == 0 else "  "}{escape(n)}</text>'
        for i, n in enumerate(note_lines)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" font-size="{FONT}">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n'
        + "\n".join(axis + out)
        + f"\n{foot}\n</svg>\n"
    )


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace")
    p.add_argument("svg")
    p.add_argument("--width", type=int, default=1400)
    p.add_argument("--from", dest="t_from", type=float, default=None)
    p.add_argument("--to", dest="t_to", type=float, default=None)
    a = p.parse_args()
    events, other = load(a.trace)
    svg = render(events, other, a.width, a.t_from, a.t_to)
    with open(a.svg, "w", encoding="utf-8") as f:
        f.write(svg)


if __name__ == "__main__":
    main()
