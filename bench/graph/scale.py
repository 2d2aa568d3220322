#!/usr/bin/python3
"""Scale benchmark (issue #46 items 4 and 5): the CLI's commands at 10k, 100k and 1M nodes.

For each size, on bench_graph_gen's synthetic model, runs as separate processes
  check          onnx-bcast check MODEL
  check --json   onnx-bcast check MODEL --json FILE
  opt            onnx-bcast opt MODEL --target explicit -o OUT
  opt --report   onnx-bcast opt MODEL --target explicit -o OUT --report FILE
and prints the median wall time, CPU time (user+sys) and peak RSS (ru_maxrss from wait4) of
--repeats runs, the ratio check --json / check (target <= 1.3 in time and memory at 100k), and
the growth 10k -> 100k and 100k -> 1M of every command (target for opt 100k -> 1M: time x11 at
most, peak RSS under 600 MiB at 1M).

  bench/graph/scale.py --cli build/bin/onnx-bcast --tools build/bin [--sizes 10000,100000]
  bench/graph/scale.py ... --commands opt          # only some commands (comma-separated)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Child, add_shared_args, machine  # noqa: E402  (run.py's rusage collection, options)

COMMANDS = ("check", "check --json", "opt", "opt --report")


def command(cli, name, model, work):
    out = os.path.join(work, "out.onnx")
    if name == "check":
        return [cli, "check", model]
    if name == "check --json":
        return [cli, "check", model, "--json", os.path.join(work, "check.json")]
    if name == "opt":
        return [cli, "opt", model, "--target", "explicit", "-o", out]
    return [cli, "opt", model, "--target", "explicit", "-o", out, "--report",
            os.path.join(work, "report.json")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_shared_args(ap, "directory holding bench_graph_gen",
                    "where models go (kept; default: a temp dir)")
    ap.add_argument("--commands", default=",".join(COMMANDS),
                    help="comma-separated subset of: %s" % ", ".join(COMMANDS))
    args = ap.parse_args()
    commands = [c.strip() for c in args.commands.split(",")]
    unknown = [c for c in commands if c not in COMMANDS]
    if unknown:
        ap.error("unknown command(s): %s" % ", ".join(unknown))

    work = args.workdir or tempfile.mkdtemp(prefix="bench-scale-")
    os.makedirs(work, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    figures = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "machine": machine(), "repeats": args.repeats, "cli": args.cli, "rows": {}}
    print("machine: %s" % figures["machine"])
    print("date:    %s   (medians of %d runs; cpu = user+sys; MiB = peak RSS)" %
          (figures["date"], args.repeats))
    header = "%9s  %-13s %9s %9s %9s" % ("nodes", "command", "wall s", "cpu s", "MiB")
    print(header)
    print("-" * len(header))
    rows = figures["rows"]
    for n in sizes:
        model = os.path.join(work, "synthetic_%d.onnx" % n)
        if not os.path.exists(model):
            subprocess.run([os.path.join(args.tools, "bench_graph_gen"), "--nodes", str(n),
                            "--out", model], check=True, stdout=subprocess.DEVNULL)
        for name in commands:
            runs = [Child(command(args.cli, name, model, work)).run()
                    for _ in range(args.repeats)]
            m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows.setdefault(name, {})[n] = m
            print("%9d  %-13s %9.3f %9.3f %9.1f" % (n, name, m["wall"], m["cpu"], m["rss_mib"]))
        if "check" not in rows or "check --json" not in rows:
            continue
        c, j = rows["check"][n], rows["check --json"][n]
        print("%9d  check --json / check: wall x%.2f, cpu x%.2f, MiB x%.2f" %
              (n, j["wall"] / c["wall"], j["cpu"] / c["cpu"], j["rss_mib"] / c["rss_mib"]))
    print()
    for a, b in zip(sizes, sizes[1:]):
        for name in commands:
            ra, rb = rows[name][a], rows[name][b]
            g = {k: rb[k] / ra[k] for k in ("wall", "cpu", "rss_mib")}
            figures.setdefault("growth", {}).setdefault("%d-%d" % (a, b), {})[name] = g
            print("growth %7d -> %7d (nodes x%g) %-13s wall x%5.1f  cpu x%5.1f  MiB x%5.1f" %
                  (a, b, b / a, name, g["wall"], g["cpu"], g["rss_mib"]))
    if 100000 in sizes and "check" in rows and "check --json" in rows:
        c, j = rows["check"][100000], rows["check --json"][100000]
        ok = j["wall"] <= 1.3 * c["wall"] and j["rss_mib"] <= 1.3 * c["rss_mib"]
        print("target check --json <= 1.3x check at 100k (wall, MiB): %s" %
              ("met" if ok else "NOT met"))
    if 100000 in sizes and 1000000 in sizes and "opt" in rows:
        a, b = rows["opt"][100000], rows["opt"][1000000]
        ok = b["wall"] / a["wall"] <= 11 and b["rss_mib"] < 600
        print("target opt 100k -> 1M wall <= x11 (x%.1f), 1M peak < 600 MiB (%.0f): %s" %
              (b["wall"] / a["wall"], b["rss_mib"], "met" if ok else "NOT met"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
