# Sourced by scripts/engines/build-*.sh: ccache and Ninja for an engine's CMake build where the
# machine has them, as the arrays `launcher` and `generator` (empty where it does not).
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
generator=()
if command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
