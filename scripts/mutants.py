#!/usr/bin/env python3
"""The mutation check (issue 43): named mutations of the product code, each applied to a scratch
copy of the tree, the affected test binaries built, their tests run. A mutant the tests catch is
"killed"; one they let through "survived". It prints one line per mutant and last
"N mutants, K killed", and exits 1 unless every mutant was killed.

  scripts/mutants.sh [--list] [--keep] [NAME ...]      (scripts/mutants.sh calls this)

Run it (docs/ci.md) before you stop whenever you touch a comparison, a probe, an engine adapter
or a target check. It is slow (a build per mutant: ccache makes the second one cheap) and runs
outside the README's test command. The scratch copy lives in $BCAST_MUTANTS_DIR (default
/tmp/bcast-mutants): a build folder is kept there between runs.

Each mutant names the file, the exact text replaced (it must occur exactly once, so that a
refactoring that moves it fails loudly instead of mutating nothing), the replacement, the CMake
targets to build (none for a script) and the ctest regex of the tests that must fail.

Before any mutant, the tests of every mutant run on the tree as it is (the baseline): a mutant
whose tests already fail there, or whose regex matches no test, cannot be judged, and is
printed "UNJUDGED" and not counted as killed (a failing test kills every mutant).
"""
import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MUTANTS = [
    # ---- the comparison (runtime/exec/error_model.cc) ----
    dict(name="comparison: the bound is ignored (every float matches)",
         file="runtime/exec/error_model.cc",
         old="        ok = err <= bound[k];",
         new="        ok = true;",
         targets=["ops_test", "live_judge_test"],
         tests=r"ErrorModel\.|LiveJudge\."),
    dict(name="comparison: the bound is zero (rounding is an error)",
         file="runtime/exec/error_model.cc",
         old="      b[k] = v;",
         new="      b[k] = 0 * v;",
         targets=["ops_test", "live_judge_test"],
         tests=r"ErrorModel\.|LiveJudge\."),
    dict(name="comparison: the sum-of-products term is left out",
         file="runtime/exec/error_model.cc",
         old="      if (s != nullptr && std::isfinite(s[k])) v += sum_factor * s[k];",
         new="",
         targets=["ops_test"],
         tests=r"ErrorModel\."),
    dict(name="comparison: the tolerance of the fallback is ignored",
         file="runtime/exec/error_model.cc",
         old="        ok = err <= kFallbackAtol + kFallbackRtol * std::fabs(y);",
         new="        ok = true;",
         targets=["ops_test", "probe_report_test"],
         tests=r"ErrorModel\.|EngineComparison\."),
    dict(name="comparison: integers compare within a tolerance",
         file="runtime/exec/error_model.cc",
         old="      if (!floating) {\n        ok = err == 0;",
         new="      if (!floating) {\n        ok = err <= 1;",
         targets=["ops_test", "probe_report_test"],
         tests=r"ErrorModel\.|EngineComparison\."),
    dict(name="comparison: an engine's shape is not compared",
         file="runtime/exec/error_model.cc",
         old="  if (!shape_ok) {",
         new="  if (false) {",
         targets=["probe_report_test", "ops_test"],
         tests=r"EngineComparison\.|ErrorModel\."),
    # ---- the judge and the live probe (engines/) ----
    dict(name="judge: a mismatch counts as a match",
         file="engines/judge.cc",
         old="      j.kind = wrong.empty() ? JudgementKind::kMatches : JudgementKind::kWrong;",
         new="      j.kind = JudgementKind::kMatches;",
         targets=["live_judge_test"],
         tests=r"LiveJudge\."),
    dict(name="judge: a refused engine counts as running",
         file="engines/judge.cc",
         old="      j.kind = JudgementKind::kRefused;",
         new="      j.kind = JudgementKind::kMatches;",
         targets=["live_judge_test"],
         tests=r"LiveJudge\."),
    dict(name="live probe: only positive values are fed",
         file="engines/live_probe.cc",
         old="      for (float& v : t.values<float>()) v = v >= 0 ? v + 0.5f : v - 0.5f;",
         new="      for (float& v : t.values<float>()) v = v >= 0 ? v + 0.5f : -v + 0.5f;",
         targets=["live_judge_test"],
         tests=r"LiveJudge\."),
    dict(name="target check: a wrong cell counts as running",
         file="targets/targets.cc",
         old="      return Refused({}, absl::StrCat(\"broadcast as '\", support->first, \"' with \", pattern,\n                                      \" operands, which \", p.name, \" \", Measured(support->second),",
         new="      if (support->second == FormSupport::kWrong) return {};\n      return Refused({}, absl::StrCat(\"broadcast as '\", support->first, \"' with \", pattern,\n                                      \" operands, which \", p.name, \" \", Measured(support->second),",
         targets=["targets_test"],
         tests=r"Targets\."),
    dict(name="library: the engine never judges the result (CLI and library differ)",
         file="api/onnx_bcast.cc",
         old="  request.engine.verify = options.verify_engine;",
         new="  request.engine.verify = false;",
         targets=["onnx_bcast_python", "api_test"],
         tests=r"^python_module$|ApiTest\."),
    dict(name="opt: an engine's wrong answer is written",
         file="driver/driver.cc",
         old="  out->engine_failed = verdict->outcome == \"wrong\" || !allow_partial;",
         new="  out->engine_failed = false;",
         targets=["onnx-bcast", "opencv_corpus_test"],
         tests=r"OpenCvVerifyEngine"),
    dict(name="bisection: every tensor counts as matching",
         file="engines/engine_bisect.cc",
         old="    if (c.match) {\n      matched.insert(name);",
         new="    if (true) {\n      matched.insert(name);",
         targets=["onnx-bcast", "opencv_corpus_test"],
         tests=r"OpenCvBisection|OpenCvVerifyEngine"),
    dict(name="live probe: a wrong answer is called a match",
         file="engines/live_probe.cc",
         old="    case engines::JudgementKind::kWrong:\n      v.why = absl::StrCat(\"runs, but wrong: \", j.why);",
         new="    case engines::JudgementKind::kWrong:\n      v.matches = true;",
         targets=["live_judge_test", "live_probe_test"],
         tests=r"LiveJudge\.|engines\.LiveProbe\.(ACell|Sampled)"),
    dict(name="live probe: a refused form counts as running",
         file="engines/live_probe.cc",
         old="    case engines::JudgementKind::kRefused:\n      v.why = absl::StrCat(\"refused (\", o.stage, \"): \", o.message);",
         new="    case engines::JudgementKind::kRefused:\n      v.matches = true;",
         targets=["live_probe_test"],
         tests=r"engines\.LiveProbe\.Sampled"),
    # ---- the probe, engine verification, the adapters (engines/) ----
    dict(name="probe: a wrong cell counts as runs-and-matches",
         file="engines/engine_probe.cc",
         old="    case engines::JudgementKind::kWrong:\n      c->result = CellResult::kWrong;",
         new="    case engines::JudgementKind::kWrong:\n      c->result = CellResult::kRunsAndMatches;",
         targets=["onnx-bcast"],
         tests=r"engines\.probe_table_ncnn$"),
    dict(name="verify-engine: a wrong engine counts as running",
         file="engines/engine_verify.cc",
         old="    case engines::JudgementKind::kWrong:\n      v.outcome = \"wrong\";",
         new="    case engines::JudgementKind::kWrong:\n      v.outcome = \"ran\";",
         targets=["live_judge_test"],
         tests=r"engines\.VerifyEngineJudge\."),
    dict(name="opencv adapter: an output's shape is flattened",
         file="engines/opencv_engine.cc",
         old="  for (int k = 0; k < m.dims; ++k) shape.push_back(m.size[k]);",
         new="  shape.push_back(static_cast<int64_t>(m.total()));",
         targets=["engines_test", "live_probe_test"],
         tests=r"engines\.OpenCvEngine\.|engines\.LiveProbe\.(ACell|Sampled)"),
    dict(name="ncnn adapter: the batch axis is not dropped",
         file="engines/ncnn_engine.cc",
         old="    dims.erase(dims.begin());\n  }\n  if (dims.size() > 4) {",
         new="  }\n  if (dims.size() > 4) {",
         targets=["engines_test"],
         tests=r"engines\.Ncnn(Engine|Dims)\."),
    dict(name="mnn adapter: a broadcast error MNNConvert logs before writing the model is not a refusal",
         file="engines/mnn_engine.cc",
         old="      \"Broad cast error\",",
         new="",
         targets=["engines_test"],
         tests=r"engines\.Mnn(Engine|ConvertRefusal)\."),
    dict(name="mnn adapter: a session whose shapes MNN could not compute is run anyway",
         file="engines/mnn_engine.cc",
         old="        resize_status != 0) {",
         new="        resize_status != 0 && false) {",
         targets=["engines_test"],
         tests=r"engines\.MnnEngine\."),
    dict(name="mnn adapter: bisection's tensors fused away by the converter are a refusal",
         file="engines/mnn_engine.cc",
         old="        if (only_present) continue;\n",
         new="",
         targets=["engines_test"],
         tests=r"engines\.MnnEngine\."),
    # ---- the target check and the fit decision (targets/) ----
    dict(name="target check: a refused form counts as running",
         file="targets/target_check.cc",
         old="    if (d.fits) return;\n    out.push_back(ViolationOf(",
         new="    return;\n    out.push_back(ViolationOf(",
         targets=["targets_test"],
         tests=r"targets\.(Targets|ShapeCells|LiveOracle)\."),
    dict(name="target check: a form the engine refuses live counts as running",
         file="targets/target_check.cc",
         old="      if (verdict->matches) return;",
         new="      return;",
         targets=["targets_test", "live_probe_test"],
         tests=r"targets\.LiveOracle\.|engines\.LiveProbe\.(ACell|TheFlat)"),
    dict(name="DecideForm: a cell measured refused at these unit axes counts as running",
         file="targets/targets.cc",
         old="        if (cell->support == FormSupport::kRuns) return d;",
         new="        return d;",
         targets=["targets_test"],
         tests=r"targets\.(Targets|ShapeCells)\."),
    # ---- issue 43 items 3-8: each item's product code and the test it gained ----
    dict(name="decide node (item 3): Expand decided with the numpy rule",
         file="analysis/decide_node.cc",
         old="    v->rule = RuleFamily::kBidirectional;\n    v->broadcast_class = BroadcastClass::kBidirectional;",
         new="    v->rule = RuleFamily::kNumpy;\n    v->broadcast_class = BroadcastClass::kBidirectional;",
         targets=["decide_node_test"],
         tests=r"check\.DecideNode\.(EveryFamily|Legacy)"),
    dict(name="legalize (item 4): nothing is rewritten without a live oracle",
         file="passes/legalize_measured.cc",
         old="    return RewriteEveryGraph(model, kLegalizeMeasuredPassName, options, stats,",
         new="    if (options.live == nullptr) return absl::OkStatus();\n    return RewriteEveryGraph(model, kLegalizeMeasuredPassName, options, stats,",
         targets=["targets_test"],
         tests=r"targets\.LiveOracle\.WithoutTheOracle"),
    # ---- issue 47 item 2: legalization as patterns (passes/legalize/) ----
    dict(name="legalize patterns: the fold strategy never offered",
         file="passes/legalize/fold_node.cc",
         old="  return all_constant && ctx->options().evaluator != nullptr &&",
         new="  return false && all_constant && ctx->options().evaluator != nullptr &&",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_fold_node"),
    dict(name="legalize patterns: the swap strategy never offered",
         file="passes/legalize/swap.cc",
         old="  return n.input_size() == 2 && !SwappedOp(n.op_type()).empty();",
         new="  return false;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_swap"),
    dict(name="legalize patterns: the align strategy never offered",
         file="passes/legalize/align.cc",
         old="  return rank && *rank > node.shapes[slot].rank();",
         new="  return false;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_ncnn_align"),
    dict(name="legalize patterns: the expand strategy never offered",
         file="passes/legalize/expand.cc",
         old="  if (!full || node.shapes[slot] == *full) return false;",
         new="  return false;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_opencv"),
    dict(name="legalize patterns: the multiply-by-ones strategy never offered",
         file="passes/legalize/multiply_by_ones.cc",
         old="  if (!full || node.constant[slot] || node.shapes[slot] == *full) return false;",
         new="  return false;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_live_mulones"),
    dict(name="legalize patterns: the concat strategy never offered",
         file="passes/legalize/concat.cc",
         old="  return node.live && full && !node.constant[slot] && !(node.shapes[slot] == *full) &&",
         new="  return false && node.live && full && !node.constant[slot] && !(node.shapes[slot] == *full) &&",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_live_concat"),
    dict(name="legalize patterns: the view strategy never offered",
         file="passes/legalize/view.cc",
         old="  if (!c || c->dims.empty()) return;",
         new="  return;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_view"),
    dict(name="legalize patterns: the rank-raise strategy never offered",
         file="passes/legalize/rank_raise.cc",
         old="  if (!c) return;",
         new="  return;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_live_raise"),
    dict(name="legalize patterns: the LayerNorm decomposition strategy never offered",
         file="passes/legalize/layernorm.cc",
         old="  if (n.input_size() < 2 || n.output_size() < 1) return std::nullopt;",
         new="  return std::nullopt;",
         targets=["passes_test"],
         tests=r"passes\.Passes/GoldenTest\.Matches/legalize_measured_layernorm"),
    dict(name="prepared conv (item 5): the oneDNN rule replaced by false",
         file="runtime/kernels/conv.cc",
         old="  if (!pointwise || g.out_size() <= kPointwiseOneDnnMaxPixels) {",
         new="  if (false) {",
         targets=["ops_test"],
         tests=r"ops\.Prepared\."),
    dict(name="prepared conv (item 5): the small-map rule replaced by false",
         file="runtime/kernels/conv.cc",
         old="  if (!depthwise && g.out_size() <= kSmallMapRulePixels) {",
         new="  if (false) {",
         targets=["ops_test"],
         tests=r"ops\.Prepared\.WithoutOneDnn"),
    dict(name="prepared conv (item 5): oneDNN's state charges nothing to the budget",
         file="runtime/kernels/conv_onednn.cc",
         old="    int64_t total = static_cast<int64_t>(e_->wei.get_desc().get_size());",
         new="    return 0;\n    int64_t total = 0;",
         targets=["ops_test"],
         tests=r"ops\.Prepared\.RefusedByTheBudget"),
    dict(name="reference guard (item 2): an all-NaN reference is informative",
         file="tests/support/reference_guard.h",
         old="  if (!first) return \"has no finite value (NaN and infinities match themselves)\";",
         new="  if (!first) return \"\";",
         targets=["opencv_run", "onnx-bcast"],
         tests=r"^opencv_run_guard$"),
    dict(name="layering (item 7): an include relative to the includer is skipped",
         file="scripts/check_layers.py",
         old="    if not here.startswith(\"..\") and os.path.isfile(os.path.join(root, here)):",
         new="    if False:",
         targets=[],
         tests=r"^layering_breakages$"),
    dict(name="layering (item 7): top-level folders missing from the table are not read",
         file="scripts/check_layers.py",
         old="            if any(f.endswith(SOURCE_SUFFIXES) for f in filenames):",
         new="            if False:",
         targets=[],
         tests=r"^layering_breakages$"),
    dict(name="peer bench (item 6): a stale onnx-bcast binary is reused",
         file="bench/peer/compare_models.sh",
         old="\npeer_build \"$build\" onnx-bcast\n",
         new="\n[[ -x \"$build/bin/onnx-bcast\" ]] || peer_build \"$build\" onnx-bcast\n",
         targets=["onnx-bcast"],
         tests=r"^bench_peer_models$"),
    dict(name="peer bench (item 6): a model ORT fails on does not fail the script",
         file="bench/peer/ort_models.mjs",
         old="  if (failed.length) process.exitCode = 1;",
         new="",
         targets=["onnx-bcast"],
         tests=r"^bench_peer_models$"),
    dict(name="peer bench (item 6): our outputs are not compared with ORT's",
         file="bench/peer/compare_models.sh",
         old="    [[ -d \"$data\" ]] || continue  # ORT failed on it: already counted",
         new="    continue",
         targets=["onnx-bcast"],
         tests=r"^bench_peer_models$"),
    dict(name="CI path (item 8): sanitize.sh defaults the fuzzing time (another spelling)",
         file="scripts/sanitize.sh",
         old="  fuzz_seconds=(-UBCAST_FUZZ_SECONDS)",
         new="  fuzz_seconds=(\"-DBCAST_FUZZ_SECONDS=${BCAST_FUZZ_SECONDS-30}\")",
         targets=[],
         tests=r"^ci_path$"),
    dict(name="CI path (item 8): test.sh does not require the dependencies",
         file="scripts/test.sh",
         old="stage configure cmake -S . -B build -DBCAST_REQUIRE_DEPS=ON",
         new="stage configure cmake -S . -B build",
         targets=[],
         tests=r"^ci_path$"),
    dict(name="CI path (item 8): a required dependency that is missing is a skip",
         file="tests/suite/dependency_test.sh",
         old="if [ \"$required\" = required ]; then",
         new="if false; then",
         targets=[],
         tests=r"^ci_path$"),
    # ---- check --json (report/): its bytes are what CI systems read ----
    dict(name="check --json: the word scan misses a quote",
         file="report/report_json.cc",
         old="has_zero(w ^ ('\"' * kOnes)) | ",
         new="",
         targets=["json_test"],
         tests=r"ReportJson\.EveryByteAtEveryPosition"),
]


def run(cmd, cwd, log):
    with open(log, "a") as out:
        out.write("$ " + " ".join(cmd) + "\n")
        out.flush()
        return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT).returncode


def ctest(build, regex):
    """ctest on the tests `regex` names; no test matched is a failure (so a baseline catches a
    regex that a rename left matching nothing)."""
    return ["ctest", "--test-dir", str(build), "-R", regex, "-j2", "--timeout", "300",
            "--no-tests=error"]


def sync(scratch):
    """The scratch copy: the tree as it is now (tracked and new files, no build folders, no
    .git); files already there with the same bytes are left alone so that builds stay
    incremental."""
    src = scratch / "src"
    wanted = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = Path(dirpath).relative_to(ROOT)
        if rel == Path("."):
            dirnames[:] = [d for d in dirnames if d != ".git" and not d.startswith("build")]
        for f in filenames:
            r = rel / f
            wanted.add(r)
            a, b = ROOT / r, src / r
            if b.exists() and b.read_bytes() == a.read_bytes():
                continue
            b.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(a, b)
    for dirpath, dirnames, filenames in os.walk(src):
        if Path(dirpath) == src:
            dirnames[:] = [d for d in dirnames if not d.startswith("build")]
        for f in filenames:
            r = Path(dirpath).relative_to(src) / f
            if r not in wanted:
                (src / r).unlink()
    return src


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="run only the mutants whose name contains these")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--keep", action="store_true",
                        help="leave the last mutant applied in the scratch copy")
    args = parser.parse_args()
    chosen = [m for m in MUTANTS if not args.names or any(n in m["name"] for n in args.names)]
    if args.list:
        for m in chosen:
            print(m["name"])
        return 0
    scratch = Path(os.environ.get("BCAST_MUTANTS_DIR", "/tmp/bcast-mutants"))
    src = sync(scratch)
    # The build folder inside the copy, as build/ is inside the tree: ccache (base_dir the
    # source) then sees the same relative paths and answers most compiles from the cache.
    build = src / "build"
    log = scratch / "mutants.log"
    log.write_text("")
    # Every mutant's text must be where it says before anything is built.
    for m in chosen:
        text = (src / m["file"]).read_text()
        if text.count(m["old"]) != 1:
            print(f"mutants: '{m['name']}': the text to replace occurs {text.count(m['old'])} "
                  f"times in {m['file']} (expected once): update scripts/mutants.py",
                  file=sys.stderr)
            return 2
    if run(["cmake", "-S", str(src), "-B", str(build)], src, log) != 0:
        print(f"mutants: configure failed (see {log})", file=sys.stderr)
        return 2
    # The baseline: every chosen mutant's targets built and its tests run on the tree as it
    # is. A test that fails (or a regex that matches none) there would "kill" any mutant.
    targets = sorted({t for m in chosen for t in m["targets"]})
    if targets and run(["cmake", "--build", str(build), "-j2", "--target", *targets], src,
                       log) != 0:
        print(f"mutants: the tree as it is does not build (see {log})", file=sys.stderr)
        return 2
    baseline = {}
    for regex in dict.fromkeys(m["tests"] for m in chosen):
        baseline[regex] = run(ctest(build, regex), src, log) == 0
        if not baseline[regex]:
            print(f"mutants: baseline: tests '{regex}' fail (or match none) on the tree as it "
                  f"is (see {log})", flush=True)
    killed = 0
    for m in chosen:
        if not baseline[m["tests"]]:
            print(f"UNJUDGED (its tests fail without it): {m['name']}", flush=True)
            continue
        path = src / m["file"]
        original = path.read_text()
        path.write_text(original.replace(m["old"], m["new"], 1))
        try:
            if m["targets"] and run(["cmake", "--build", str(build), "-j2", "--target",
                                     *m["targets"]], src, log) != 0:
                verdict = "killed (does not build)"
            elif run(ctest(build, m["tests"]), src, log) != 0:
                verdict = "killed"
            else:
                verdict = "SURVIVED"
        finally:
            if not args.keep:
                path.write_text(original)
        killed += verdict.startswith("killed")
        print(f"{verdict}: {m['name']}", flush=True)
    print(f"{len(chosen)} mutants, {killed} killed")
    return 0 if killed == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
