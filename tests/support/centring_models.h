// Test support: LayerNorm's centring (x - ReduceMean(x) over the last axis) in the two forms
// whose fate on an engine only its exact shapes decide (issue 35): the live oracle's unit test
// (tests/unit/targets/live_oracle_test.cc, a scripted engine) and its end-to-end test on the
// engine itself (tests/e2e/live_probe_test.cc) take the same models. Header-only.
#ifndef ONNX_BCAST_TESTS_SUPPORT_CENTRING_MODELS_H_
#define ONNX_BCAST_TESTS_SUPPORT_CENTRING_MODELS_H_

namespace onnx_bcast::test_support {

/// At T = 1: `[1,1,32] - [1,1,1]`, the mean of the last axis subtracted.
inline constexpr char kCentringModel[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,1,32] x) => (float[1,1,32] y) {
  m = ReduceMean <axes = [-1], keepdims = 1> (x)
  y = Sub (x, m)
}
)";

/// Over a flattened vector: `[1,32] - [1,1]`, both computed.
inline constexpr char kFlatCentringModel[] = R"(<ir_version: 8, opset_import: ["" : 13]>
g (float[1,32] i) => (float[1,32] y) {
  x = Relu (i)
  m = ReduceMean <axes = [-1], keepdims = 1> (x)
  y = Sub (x, m)
}
)";

}  // namespace onnx_bcast::test_support

#endif  // ONNX_BCAST_TESTS_SUPPORT_CENTRING_MODELS_H_
