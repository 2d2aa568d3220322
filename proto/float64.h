// A model made to compute in float64 where it computes in float32: the reference the error
// model (runtime/exec/error_model.h) measures an engine's and our float32 executor's rounding
// against. Only float32 is promoted; float16, bfloat16 and every other type stay as they are.
#ifndef ONNX_BCAST_PROTO_FLOAT64_H_
#define ONNX_BCAST_PROTO_FLOAT64_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "proto/model_io.h"

namespace onnx_bcast::proto {

/// `model` with every float32 value computed in float64, in the main graph, its subgraphs and
/// the model's functions:
/// - declared types (inputs, outputs, value_info, also inside sequences and optionals);
/// - initializers and tensor attributes (Constant's, ConstantOfShape's), decoded from any
///   encoding (external data is read relative to the model's folder, at most `max_bytes` each)
///   and written inline as float64; Constant's value_float(s) become a float64 tensor;
/// - Cast's `to` and the `dtype` of EyeLike and the random generators, when float32 (the random
///   generators' default, float32, written out);
/// - a ConstantOfShape without a value (float32 zeros by default) gets a float64 zero;
/// - the inputs ONNX types as float32 whatever the data (Resize's and Upsample's scales) are
///   cast back to float32 by an inserted Cast.
/// `extra_outputs` are added to the main graph's outputs, untyped (intermediates a caller wants
/// to read). Errors: Unimplemented for what cannot be promoted (a sparse float initializer),
/// the decoder's errors for a tensor that cannot be read.
absl::StatusOr<Model> PromoteToFloat64(const Model& model,
                                       const std::vector<std::string>& extra_outputs = {},
                                       int64_t max_bytes = int64_t{1} << 32);

/// The node producing `output` in the main graph of `model`, as the error model sees it.
struct Producer {
  std::string op;  ///< "" when `output` is a graph input or an initializer
  /// The node's inputs ("" for an omitted one), and which of them are neither graph inputs nor
  /// initializers (their values must be read as intermediates).
  std::vector<std::string> inputs;
  std::vector<std::string> computed_inputs;
  /// For a node that sums products (MatMul, Gemm, Conv, ConvTranspose, ReduceSum, ReduceMean,
  /// ReduceSumSquare, ReduceL1, ReduceL2, AveragePool, GlobalAveragePool, Sum, Mean, Add, Sub):
  /// the node alone computing in float64 on graph inputs in0, in1, ... (one per non-omitted
  /// input, to be fed with absolute values), its output "out"; Sub as Add, Gemm's alpha and beta
  /// as their absolute values. Its output is S, the sum of the magnitudes of the terms.
  std::optional<Model> magnitude;
  /// The number of terms each output element sums, from the input shapes (of `inputs`, empty
  /// for an omitted one) and the output's.
  std::function<int64_t(const std::vector<std::vector<int64_t>>&, const std::vector<int64_t>&)>
      terms;
};
Producer FindProducer(const Model& model, const std::string& output);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_FLOAT64_H_
