// The single-node models of the engine probe's "op" cells: one node of each op the exporter
// corpus uses (tests/fixtures/exported/), alone. For an engine that converts models first
// (ncnn) they say whether the converter has the op at all. A table, kept apart from the
// probe's logic.
#ifndef ONNX_BCAST_ENGINES_PROBE_OP_MODELS_H_
#define ONNX_BCAST_ENGINES_PROBE_OP_MODELS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace onnx_bcast::engines {

/// One model in ONNX text form. Inputs are float graph inputs named op0, op1, ... (bool for
/// Not) of the shapes in `inputs` ("1,3,4,5;1,2,4,5": `;` between inputs); `@` in an
/// initializer stands for seeded values in [-0.5, 0.5) of its declared size. The
/// broadcasting ops of the grid (Add, Expand, MatMul, Where, ...) are measured by their own
/// cells, not here.
struct OpModel {
  const char* op;
  int opset;
  const char* inputs;
  const char* outputs;
  const char* initializers;
  const char* nodes;

  /// `inputs` as one shape per input.
  std::vector<std::vector<int64_t>> InputShapes() const;
};

/// Every op model, in op order.
absl::Span<const OpModel> OpModels();

/// The model of `op`, or null.
const OpModel* FindOpModel(std::string_view op);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_PROBE_OP_MODELS_H_
