#!/usr/bin/python3
"""Decided fraction of the exporter corpus: runs `onnx-bcast check --json -` on every model of
tests/fixtures/exported/manifest.json and prints per model and in total the broadcasting nodes
and their verdicts, and decided = (ok + error + conditional) / total.
Usage: scripts/decided_fraction.py BINARY [--corpus DIR] [--expect-exit] [--min-decided F]
--expect-exit fails (exit 1) when check's exit code differs from the manifest's check_exit or
check crashes; --min-decided fails when the total decided fraction is below F (0..1).
Only python3 + json: CI needs no torch."""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--corpus", default=os.path.join(HERE, "..", "tests", "fixtures", "exported"))
    ap.add_argument("--expect-exit", action="store_true")
    ap.add_argument("--min-decided", type=float)
    a = ap.parse_args()
    manifest = json.load(open(os.path.join(a.corpus, "manifest.json")))
    keys = ("ok", "error", "conditional", "unknown")
    total = dict.fromkeys(keys, 0)
    total["nodes"] = 0
    bad = []
    print(f"{'model':32} {'nodes':>5} {'ok':>4} {'err':>4} {'cond':>4} {'unk':>4} {'decided':>8}")
    for name in sorted(manifest):
        path = os.path.join(a.corpus, name + ".onnx")
        p = subprocess.run([a.binary, "check", path, "--json", "-"], capture_output=True,
                           text=True, timeout=120)
        if p.returncode not in (0, 1) or p.returncode != manifest[name].get("check_exit", 0):
            bad.append(f"{name}: exit {p.returncode} (expected "
                       f"{manifest[name].get('check_exit', 0)}): {p.stderr.strip()[:200]}")
            if p.returncode not in (0, 1):
                continue
        s = json.loads(p.stdout)["summary"]
        for k in keys + ("nodes",):
            total[k] += s[k]
        dec = (s["nodes"] - s["unknown"]) / s["nodes"] if s["nodes"] else 1.0
        print(f"{name:32} {s['nodes']:5} {s['ok']:4} {s['error']:4} {s['conditional']:4} "
              f"{s['unknown']:4} {dec:8.1%}")
    dec = (total["nodes"] - total["unknown"]) / total["nodes"] if total["nodes"] else 1.0
    print(f"{'TOTAL':32} {total['nodes']:5} {total['ok']:4} {total['error']:4} "
          f"{total['conditional']:4} {total['unknown']:4} {dec:8.1%}")
    for b in bad:
        print("FAIL:", b)
    if a.expect_exit and bad:
        return 1
    if a.min_decided is not None and dec < a.min_decided:
        print(f"FAIL: decided {dec:.1%} < {a.min_decided:.1%}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
