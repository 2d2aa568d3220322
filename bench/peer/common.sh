# Shell parts shared by compare.sh (kernels) and compare_models.sh (whole models): paths, the
# shared flags, tool checks, the Release build and the onnxruntime-node install. Sourced, not
# run; the caller sets `peer_name` (for messages) and `peer_usage_lines` (its header's length),
# and defines peer_own_flag for peer_parse_args.
peer_here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peer_root="$(cd "$peer_here/../.." && pwd)"

peer_die() {  # peer_die CODE MESSAGE
  echo "$peer_name: $2" >&2
  exit "$1"
}

# Consumes a flag both scripts take (--build-dir, --threads, --only, --json, --help) from the
# front of "$@" into build, threads, only, json; peer_shift is the words used, 0 if none.
peer_shared_flag() {
  peer_shift=2
  case "$1" in
    --build-dir) build="$(realpath -m "$2")" ;;
    --threads) threads="$2" ;;
    --only) only="$2" ;;
    --json) json="$2" ;;
    -h|--help) sed -n "2,${peer_usage_lines}p" "$0"; exit 0 ;;
    *) peer_shift=0 ;;
  esac
  if ((peer_shift == 2 && $# < 2)); then peer_die 64 "$1 needs a value"; fi
}

# Parses "$@": the shared flags (peer_shared_flag), then the caller's own through its
# peer_own_flag, which sets peer_shift the same way (0: not its flag); anything else is a
# usage error.
peer_parse_args() {
  while [[ $# -gt 0 ]]; do
    peer_shared_flag "$@"
    ((peer_shift)) || peer_own_flag "$@"
    ((peer_shift)) || peer_die 64 "unknown argument $1"
    shift "$peer_shift"
  done
}

peer_require_tools() {
  local tool
  for tool in cmake node npm /usr/bin/python3; do
    command -v "$tool" >/dev/null || peer_die 69 "$tool not found (scripts/setup.sh installs it)"
  done
}

# peer_build BUILD_DIR TARGET... [-- CMAKE_ARGS...]: configures a Release build once, then
# builds the targets.
peer_build() {
  local dir="$1" targets=() cmake_args=()
  shift
  while [[ $# -gt 0 && "$1" != "--" ]]; do targets+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift && cmake_args=("$@")
  if [[ ! -f "$dir/CMakeCache.txt" ]]; then
    cmake -S "$peer_root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >/dev/null
  fi
  cmake --build "$dir" -j2 --target "${targets[@]}" >/dev/null
}

# onnxruntime-node ships its linux-x64 library inside the npm package, so the install script
# (which may try to fetch CUDA parts) is not needed.
peer_ensure_ort() {
  if [[ ! -d "$peer_here/node_modules/onnxruntime-node" ]]; then
    (cd "$peer_here" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}

peer_machine_line() {
  echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cpus; $(date -u +%Y-%m-%dT%H:%MZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
}
