#!/usr/bin/env bash
# Whole-model peer comparison with onnxruntime over the committed export corpus (issue #24):
#   bench/peer/compare_models.sh [--build-dir DIR] [--threads 1,2] [--runs N] [--rounds R]
#                                [--only REGEX] [--json FILE] [--baseline ONNX_BCAST]
#                                [--sizes HxW,HxW,...] [--rtol R] [--atol A]
# Builds onnx-bcast (Release) or brings the given build up to date, installs onnxruntime-node
# from npm beside this script (once), makes each model of tests/fixtures/exported and
# bench/peer/models static at its test dims (image models at 224x224; `opt --passes none --dim
# ...`), runs ORT once on each and ours on the same inputs (`run --test-data`, within --rtol
# (1e-3) and --atol (1e-4) of ORT's outputs), then alternates our `run --bench` with ORT's runs
# (ort_models.mjs) in 5 rounds and prints medians and ratios (ours/ORT: the median of the rounds'
# own ratios). --baseline runs a second binary in each round too. --sizes runs the image models
# at each H x W (others once) and ends with a table of ours/ORT per model and size (--json: one
# file per size). Exits 1 when a model fails on either side or our outputs differ from ORT's
# (each named; a failed model is never silently dropped).
set -euo pipefail
peer_name=compare_models.sh peer_usage_lines=14
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here="$peer_here"
root="$peer_root"
build="$root/build"
threads="1"
runs=20
rounds=5
only=""
json=""
baseline=""
sizes="224x224"
rtol=1e-3
atol=1e-4
peer_own_flag() {
  peer_shift=2
  case "$1" in
    --rtol) rtol="$2" ;;
    --atol) atol="$2" ;;
    --runs) runs="$2" ;;
    --rounds) rounds="$2" ;;
    --baseline) baseline="$(realpath "$2")" ;;
    --sizes) sizes="$2" ;;
    *) peer_shift=0 ;;
  esac
}
peer_parse_args "$@"
peer_require_tools
# Always: cmake --build is a no-op on an up-to-date binary, and a stale one would measure code
# that is no longer the tree's.
peer_build "$build" onnx-bcast
peer_ensure_ort
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
corpus="$root/tests/fixtures/exported"
extra="$here/models"
IFS=',' read -r -a size_list <<<"$sizes"
for size in "${size_list[@]}"; do
  [[ "$size" =~ ^[0-9]+x[0-9]+$ ]] || peer_die 64 "--sizes takes HxW,HxW,... (got '$size')"
done
args=(--onnx-bcast "$build/bin/onnx-bcast" --threads "$threads" --runs "$runs" --rounds "$rounds")
[[ -n "$baseline" ]] && args+=(--baseline "$baseline")
peer_machine_line
jsons=()
failures=()
first=1
for size in "${size_list[@]}"; do
  h="${size%x*}" w="${size#*x}"
  models=()
  # path|name|dims|image ('|', not a tab: read merges empty fields between tabs): the manifest's first valid binding of the model's own
  # symbols (bench/peer/models: its declared symbols), H and W set to the size.
  while IFS='|' read -r path name dims image; do
    [[ -n "$only" && ! "$name" =~ $only ]] && continue
    ((first)) || [[ "$image" == 1 ]] || continue  # size-independent models run once
    "$build/bin/onnx-bcast" opt "$path" -o "$tmp/$name.onnx" --passes none \
      ${dims:+--dim "$dims"} -q >/dev/null
    models+=(--model "$tmp/$name.onnx")
  done < <(/usr/bin/python3 - "$corpus" "$extra" "$h" "$w" <<'PY'
import glob, json, os, sys, onnx
corpus, extra, h, w = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
manifest = json.load(open(f"{corpus}/manifest.json"))
entries = [(f"{corpus}/{n}.onnx", n, dict(e["bindings_ok"][0])) for n, e in sorted(manifest.items())]
entries += [(p, os.path.basename(p)[:-5], {}) for p in sorted(glob.glob(f"{extra}/*.onnx"))]
for path, name, b in entries:
    m = onnx.load(path, load_external_data=False)
    declared = {d.dim_param for i in m.graph.input for d in i.type.tensor_type.shape.dim}
    image = "H" in declared and "W" in declared
    if image:
        b["H"], b["W"] = h, w
    dims = ",".join(f"{k}={v}" for k, v in sorted(b.items()) if k in declared)
    print(f"{path}|{name}|{dims}|{int(image)}")
PY
  )
  first=0
  ((${#models[@]})) || continue
  size_args=()
  if [[ -n "$json" ]]; then
    out="$json"
    ((${#size_list[@]} > 1)) && out="${json%.json}-$size.json"
    size_args=(--json "$out")
    jsons+=("$size=$out")
  elif ((${#size_list[@]} > 1)); then
    size_args=(--json "$tmp/sweep-$size.json")
    jsons+=("$size=$tmp/sweep-$size.json")
  fi
  ((${#size_list[@]} > 1)) && echo "== size ${h}x${w} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  check="$tmp/check-$size"
  node "$here/ort_models.mjs" "${args[@]}" "${size_args[@]}" --check-dir "$check" \
    "${models[@]}" || failures+=("size $size: a model failed on one side (see its 'failed:' line)")
  # Ours on ORT's inputs, against ORT's outputs: the ratio of a wrong model means nothing.
  for ((k = 1; k < ${#models[@]}; k += 2)); do
    name="$(basename "${models[$k]}" .onnx)"
    data="$check/$name/test_data_set_0"
    [[ -d "$data" ]] || continue  # ORT failed on it: already counted
    if ! "$build/bin/onnx-bcast" run "${models[$k]}" --test-data "$data" --rtol "$rtol" \
        --atol "$atol" >"$tmp/run.out" 2>&1; then
      sed 's/^/  /' "$tmp/run.out"
      failures+=("$name at $size: our outputs differ from ORT's (or ours fails on its inputs)")
    fi
  done
done
# The sweep table: ours/ORT per model (rows) and size (columns), one thread count per table.
if ((${#size_list[@]} > 1)); then
  /usr/bin/python3 - "${jsons[@]}" <<'PY'
import json, statistics, sys
sizes, table = [], {}
for arg in sys.argv[1:]:
    size, path = arg.split("=", 1)
    sizes.append(size)
    for r in json.load(open(path))["rows"]:
        table.setdefault(r["threads"], {}).setdefault(r["model"], {})[size] = r
for threads, rows in sorted(table.items()):
    print(f"\nsweep, {threads} thread(s): ours/ORT" + (" (before/ORT -> ours/ORT)" if any(
        "before_ratio" in c for m in rows.values() for c in m.values()) else ""))
    print("| model | " + " | ".join(sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for model in sorted(rows):
        cells = []
        for size in sizes:
            c = rows[model].get(size)
            if c is None:
                cells.append("")
            elif "failed" in c:
                cells.append("failed")
            elif "before_ratio" in c:
                cells.append(f"{c['before_ratio']:.2f} -> {c['ratio']:.2f}")
            else:
                cells.append(f"{c['ratio']:.2f}")
        print(f"| {model} | " + " | ".join(cells) + " |")
    for size in sizes:
        ran = [m[size] for m in rows.values() if size in m]
        ratios = [c["ratio"] for c in ran if "failed" not in c]
        failed = len(ran) - len(ratios)
        if ratios:
            print(f"{size}: median {statistics.median(ratios):.2f}, worst {max(ratios):.2f} "
                  f"over {len(ratios)} of {len(ran)} models" +
                  (f" ({failed} failed)" if failed else ""))
PY
fi
if ((${#failures[@]})); then
  printf 'compare_models.sh: FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
