# The steps both walkthroughs (newcomer_walkthrough.sh, round_two_walkthrough.sh) are written
# in; sourced once `scratch` is set: starts in a fresh $scratch.
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || exit 1

fail() { echo "FAIL: $*" >&2; exit 1; }
# step NAME EXPECTED_EXIT CMD...: runs CMD with stdout and stderr in NAME.out and NAME.err.
step() {
  local name=$1 want=$2
  shift 2
  "$@" >"$name.out" 2>"$name.err"
  local code=$?
  echo "== $name: exit $code"; cat "$name.out" "$name.err"
  [ "$code" = "$want" ] || fail "$name: exit $code, expected $want"
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$1 has: $2"; }
