#!/bin/bash
# The opt differential: runs `onnx-bcast opt` of two binaries (BASE_BIN, NEW_BIN) on every model
# of tests/fixtures/exported/ and models/ for every target, and compares what they wrote: every
# written file byte for byte, the --report JSON and the exit code exactly (the "seconds" fields
# and the timings in the text aside), the printed text timings aside. A refactor that must not
# change behaviour passes it with every run identical.
#
#   scripts/opt_differential.sh BASE_BIN NEW_BIN OUT_DIR
#
# Runs per model: explicit, none and canonical as they are; opencv, ncnn and mnn at the manifest's
# first binding with N=1 (else its first; its symbols only; models/: N=1, B=1) with --no-live-probe
# --no-verify-engine; opencv once more as it is (live probes and the engine check where this build
# has OpenCV). OUT_DIR/base and OUT_DIR/new hold each run's folder (out.onnx, report.json, stdout,
# stderr, exit); each run starts in its own folder, so the paths in the reports are alike.
# Exit 0 when every run is identical, 1 otherwise (the runs that differ are listed).
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 BASE_BIN NEW_BIN OUT_DIR" >&2
  exit 64
fi
src=$(cd "$(dirname "$0")/.." && pwd)
base_bin=$(realpath "$1")
new_bin=$(realpath "$2")
out=$(realpath -m "$3")
mkdir -p "$out"

# One line per run: NAME MODEL TARGET DIMS EXTRA... (DIMS '-' for none).
runs="$out/runs.txt"
/usr/bin/python3 - "$src" >"$runs" <<'EOF'
import glob, json, os, sys
src = sys.argv[1]
manifest = json.load(open(os.path.join(src, "tests/fixtures/exported/manifest.json")))
models = sorted(glob.glob(os.path.join(src, "tests/fixtures/exported/*.onnx")))
models += sorted(glob.glob(os.path.join(src, "models/*.onnx")))
models.append(os.path.join(src, "models/external/mlp.onnx"))
own_dims = {"cnn_block": "N=1", "legacy_axis": "-", "mlp": "B=1"}
for model in models:
    stem = os.path.basename(model)[:-len(".onnx")]
    if stem in manifest:
        bindings = manifest[stem]["bindings_ok"]
        first = next((b for b in bindings if b.get("N") == 1), bindings[0])
        # A binding also names the export's fixed sizes (H, W); --dim takes the model's symbols.
        symbols = {s for axes in manifest[stem]["dynamic_axes"].values() for s in axes.values()}
        dims = ",".join(f"{k}={v}" for k, v in sorted(first.items()) if k in symbols)
    else:
        dims = own_dims[stem]
    for target in ("explicit", "none", "canonical"):
        print(f"{stem}.{target} {model} {target} -")
    for target in ("opencv", "ncnn", "mnn"):
        print(f"{stem}.{target}.table {model} {target} {dims} --no-live-probe --no-verify-engine")
    print(f"{stem}.opencv.live {model} opencv {dims}")
EOF

run_all() {  # BIN DIR
  local bin=$1 dir=$2 name model target dims extra
  rm -rf "$dir"
  while read -r name model target dims extra; do
    mkdir -p "$dir/$name"
    local args=(opt "$model" -o out.onnx --target "$target" --report report.json)
    [ "$dims" != "-" ] && args+=(--dim "$dims")
    # shellcheck disable=SC2206
    [ -n "$extra" ] && args+=($extra)
    (cd "$dir/$name" && "$bin" "${args[@]}" >stdout 2>stderr; echo $? >exit)
  done <"$runs"
}

echo "$(wc -l <"$runs") runs per binary; base: $base_bin" >&2
run_all "$base_bin" "$out/base"
echo "new: $new_bin" >&2
run_all "$new_bin" "$out/new"

/usr/bin/python3 - "$out" "$runs" <<'EOF'
import json, os, re, sys
out, runs = sys.argv[1], sys.argv[2]
timing = re.compile(r"\d+(\.\d+)?(e-?\d+)? ?(ms|s)\)")

def strip_json(value):
    if isinstance(value, dict):
        return {k: strip_json(v) for k, v in value.items() if k != "seconds" and not k.endswith("_ms")}
    if isinstance(value, list):
        return [strip_json(v) for v in value]
    if isinstance(value, str):
        return timing.sub("TIME)", value)
    return value

def read(path):
    with open(path, "rb") as f:
        return f.read()

names = [line.split()[0] for line in open(runs)]
identical, differing = 0, []
for name in names:
    a, b = os.path.join(out, "base", name), os.path.join(out, "new", name)
    why = []
    files_a, files_b = sorted(os.listdir(a)), sorted(os.listdir(b))
    if files_a != files_b:
        why.append(f"files {files_a} vs {files_b}")
    for f in sorted(set(files_a) & set(files_b)):
        da, db = read(os.path.join(a, f)), read(os.path.join(b, f))
        if f == "report.json":
            same = strip_json(json.loads(da)) == strip_json(json.loads(db))
        elif f in ("stdout", "stderr"):
            same = timing.sub("TIME)", da.decode(errors="replace")) == \
                   timing.sub("TIME)", db.decode(errors="replace"))
        else:
            same = da == db
        if not same:
            why.append(f)
    if why:
        differing.append(f"{name}: {', '.join(why)}")
    else:
        identical += 1
written = sum(os.path.exists(os.path.join(out, "base", n, "out.onnx")) for n in names)
print(f"opt differential: {len(names)} runs, {identical} identical, {len(differing)} differ "
      f"({written} models written by the base)")
for line in differing:
    print("  " + line)
sys.exit(1 if differing else 0)
EOF
