#!/usr/bin/python3
"""Whole-graph benchmarks (issue #7 items 4 and 5); run through bench/graph/run.sh.

Generates synthetic models of 10k, 100k and 1M nodes (bench_graph_gen), then for each:
  - phases of check and `opt --target explicit` timed apart in one process
    (bench_graph_phases: load, check analysis, passes, target check, save);
  - the whole `onnx-bcast opt MODEL --target explicit -o OUT` and `onnx-bcast check MODEL`
    commands as separate processes: wall seconds, CPU seconds (user+sys) and peak RSS
    (ru_maxrss from wait4);
  - libonnx's C++ shape inference alone on the same file in the same run
    (bench_graph_onnx_infer: onnx::shape_inference::InferShapes, parse excluded);
and prints medians of --repeats runs, nodes per second and the growth 10k -> 100k -> 1M.

Then the memory-at-scale check: a model with 1 GiB of external-data weights, written into a
temporary directory (never into the tree); `check` and `opt --target explicit` on it must stay
below 200 MiB peak RSS and read none of the weight bytes. Reads are counted with strace
(read/pread64/readv/preadv and mmap calls on the weights file descriptor, with -y paths).
"""

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


class Child:
    """Runs a command and collects its own rusage (wait4 on its pid)."""

    def __init__(self, cmd):
        self.cmd = cmd

    def run(self):
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                fd = os.open(os.devnull, os.O_WRONLY)
                os.dup2(fd, 1)
                os.execv(self.cmd[0], self.cmd)
            finally:
                os._exit(127)
        _, status, usage = os.wait4(pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            sys.exit("%s failed with exit %d" % (" ".join(self.cmd), code))
        return {
            "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime,
            "rss_mib": usage.ru_maxrss / 1024.0,
        }


def median_runs(cmd, repeats):
    runs = [Child(cmd).run() for _ in range(repeats)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def json_line(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout.decode()
    return json.loads(out.strip().splitlines()[-1])


def machine():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = "%.0f GiB" % (kb / 1024 / 1024)
    except OSError:
        pass
    return "%s, %d cores, %s, %s" % (cpu, os.cpu_count() or 0, mem, platform.platform())


def weight_reads(cmd, weights):
    """What cmd does with the bytes of `weights`, from an strace log (-y names each fd's
    file): bytes returned by read/pread64/readv/preadv on it (bytes through the process),
    mmap calls of it, and bytes copied kernel-side from it (copy_file_range/sendfile/splice,
    which never enter the process)."""
    fd, log = tempfile.mkstemp(suffix=".strace")
    os.close(fd)
    subprocess.run(["strace", "-f", "-y", "-o", log, "-e",
                    "trace=read,pread64,readv,preadv,preadv2,mmap,copy_file_range,sendfile,"
                    "splice"] + cmd,
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = os.path.basename(weights)
    read_bytes, maps, kernel_bytes = 0, 0, 0
    with open(log) as f:
        for line in f:
            call = line.split("(", 1)[0].split()[-1] if "(" in line else ""
            if base not in line.split(",", 1)[0] and not (call == "mmap" and base in line):
                continue
            m = re.search(r"\)\s+=\s+(\d+)", line)
            if call == "mmap":
                maps += 1
            elif call in ("copy_file_range", "sendfile", "splice"):
                kernel_bytes += int(m.group(1)) if m else 0
            elif m:
                read_bytes += int(m.group(1))
    os.unlink(log)
    return read_bytes, maps, kernel_bytes


def add_shared_args(ap, tools_help, workdir_help):
    """The options run.py and scale.py both take: the binaries, the model sizes, the repeats,
    where models go and where the figures' JSON goes."""
    ap.add_argument("--cli", required=True, help="the onnx-bcast binary")
    ap.add_argument("--tools", required=True, help=tools_help)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", default=None, help=workdir_help)
    ap.add_argument("--json", default=None, help="also write the figures as JSON here")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_shared_args(ap, "directory of bench_graph_* binaries",
                    "where models go (default: a temp dir)")
    ap.add_argument("--external-mib", type=int, default=1024)
    args = ap.parse_args()

    gen = os.path.join(args.tools, "bench_graph_gen")
    infer = os.path.join(args.tools, "bench_graph_onnx_infer")
    phases = os.path.join(args.tools, "bench_graph_phases")
    work = args.workdir or tempfile.mkdtemp(prefix="bench-graph-")
    os.makedirs(work, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    figures = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(),
               "repeats": args.repeats, "sizes": []}
    print("machine: %s" % figures["machine"])
    print("date:    %s   (medians of %d runs; cpu = user+sys of the process)" %
          (figures["date"], args.repeats))
    print()
    header = ("%9s | %7s %7s %7s %7s %7s | %8s %8s %7s | %8s %8s %7s | %8s %8s | %6s %6s | %9s" %
              ("nodes", "load", "check", "passes", "tcheck", "save", "opt wall", "opt cpu",
               "opt MiB", "chk wall", "chk cpu", "chk MiB", "onnx wl", "onnx cpu", "x wall",
               "x cpu", "opt n/s"))
    print("phases: CPU seconds inside one process (bench_graph_phases); opt/chk: whole "
          "onnx-bcast commands;")
    print("onnx: libonnx InferShapes alone (C++, parse excluded); x: onnx / opt (target >= 2)")
    print(header)
    print("-" * len(header))
    for n in sizes:
        model = os.path.join(work, "synthetic_%d.onnx" % n)
        if not os.path.exists(model):
            subprocess.run([gen, "--nodes", str(n), "--out", model], check=True,
                           stdout=subprocess.DEVNULL)
        out = os.path.join(work, "synthetic_%d.explicit.onnx" % n)
        ph = [json_line([phases, model, out]) for _ in range(args.repeats)]
        ph = {k: statistics.median(p[k] for p in ph) for k in ph[0]}
        opt = median_runs([args.cli, "opt", model, "--target", "explicit", "-o", out],
                          args.repeats)
        chk = median_runs([args.cli, "check", model], args.repeats)
        onnx = json_line([infer, model, str(args.repeats)])
        onnx_s = statistics.median(onnx["infer_s"])
        onnx_cpu = statistics.median(onnx["infer_cpu_s"])
        row = {"nodes": n, "phases": ph, "opt": opt, "check": chk, "onnx_infer_s": onnx_s,
               "onnx_infer_cpu_s": onnx_cpu}
        figures["sizes"].append(row)
        print("%9d | %7.3f %7.3f %7.3f %7.3f %7.3f | %8.3f %8.3f %7.0f | %8.3f %8.3f %7.0f | "
              "%8.3f %8.3f | %6.2f %6.2f | %9.0f"
              % (n, ph["load_cpu_s"], ph["check_cpu_s"], ph["passes_cpu_s"],
                 ph["target_check_cpu_s"], ph["save_cpu_s"], opt["wall"], opt["cpu"],
                 opt["rss_mib"], chk["wall"], chk["cpu"], chk["rss_mib"], onnx_s, onnx_cpu,
                 onnx_s / opt["wall"], onnx_cpu / opt["cpu"], n / opt["wall"]))
    print()
    by = {r["nodes"]: r for r in figures["sizes"]}
    for a, b in ((10000, 100000), (100000, 1000000)):
        if a in by and b in by:
            g = {k: by[b]["opt"][k] / by[a]["opt"][k] for k in ("wall", "cpu")}
            print("growth %dk -> %dk: opt wall x%.1f, opt cpu x%.1f, check wall x%.1f, "
                  "libonnx x%.1f (nodes x%d)" %
                  (a // 1000, b // 1000, g["wall"], g["cpu"],
                   by[b]["check"]["wall"] / by[a]["check"]["wall"],
                   by[b]["onnx_infer_s"] / by[a]["onnx_infer_s"], b // a))
            figures["growth_%d_%d" % (a, b)] = g
    if 100000 in by:
        r = by[100000]
        print("targets: opt 100k %.3f s wall, %.3f s cpu (<= 0.5 s: %s); libonnx / opt %.2fx "
              "wall, %.2fx cpu (>= 2x: %s)" %
              (r["opt"]["wall"], r["opt"]["cpu"], "met" if r["opt"]["wall"] <= 0.5 else "NOT met",
               r["onnx_infer_s"] / r["opt"]["wall"], r["onnx_infer_cpu_s"] / r["opt"]["cpu"],
               "met" if r["onnx_infer_s"] / r["opt"]["wall"] >= 2 else "NOT met"))
        if 1000000 in by:
            x = by[1000000]["opt"]["wall"] / r["opt"]["wall"]
            xc = by[1000000]["opt"]["cpu"] / r["opt"]["cpu"]
            print("         opt 1M / 100k x%.1f wall, x%.1f cpu (<= 12x: %s)" %
                  (x, xc, "met" if x <= 12 else "NOT met"))

    if args.external_mib > 0:
        print()
        ext_dir = tempfile.mkdtemp(prefix="bench-graph-ext-", dir=work)
        model = os.path.join(ext_dir, "weights.onnx")
        subprocess.run([gen, "--nodes", "10000", "--out", model, "--external-mib",
                        str(args.external_mib)], check=True, stdout=subprocess.DEVNULL)
        weights = model + ".weights"
        size_mib = os.path.getsize(weights) / (1 << 20)
        rows = {}
        print("memory at scale: a 10k-node model with %.0f MiB of external-data weights" %
              size_mib)
        same_dir_out = os.path.join(ext_dir, "weights.explicit.onnx")
        other_dir = tempfile.mkdtemp(prefix="out-", dir=work)
        other_out = os.path.join(other_dir, "weights.explicit.onnx")
        for label, cmd in (
                ("check", [args.cli, "check", model]),
                ("opt (same dir)", [args.cli, "opt", model, "--target", "explicit", "-o",
                                    same_dir_out]),
                ("opt (other dir)", [args.cli, "opt", model, "--target", "explicit", "-o",
                                     other_out])):
            m = median_runs(cmd, args.repeats)
            read_bytes, maps, kernel_bytes = weight_reads(cmd, weights)
            rows[label] = dict(m, weight_bytes_read=read_bytes, weight_mmaps=maps,
                               weight_bytes_copied_in_kernel=kernel_bytes)
            print("%-16s peak RSS %6.1f MiB (< 200: %s), wall %.3f s, cpu %.3f s; weight bytes "
                  "read %d, mmaps %d, copied in kernel %d" %
                  (label, m["rss_mib"], "met" if m["rss_mib"] < 200 else "NOT met",
                   m["wall"], m["cpu"], read_bytes, maps, kernel_bytes))
        figures["external"] = {"weights_mib": size_mib, "runs": rows}
        shutil.rmtree(ext_dir, ignore_errors=True)
        shutil.rmtree(other_dir, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
