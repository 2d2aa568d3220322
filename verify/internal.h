// What verify.cc (whole-model runs and bisection) and local_verify.cc (node by node) share:
// how a model is prepared for the executor, and which condition samples may bind symbols in.
// Not part of the library's interface.
#ifndef ONNX_BCAST_VERIFY_INTERNAL_H_
#define ONNX_BCAST_VERIFY_INTERNAL_H_

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/shape_propagation.h"
#include "broadcast/condition.h"
#include "proto/model_io.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "verify/verify.h"

namespace onnx_bcast::verify::internal {

runtime::RunOptions RunOptionsFor(int threads, const runtime::RunBudget* budget,
                             std::shared_ptr<runtime::MemoryBudget> memory);

/// `model`'s executor under the verification's threads, deadline and memory budget.
absl::StatusOr<std::unique_ptr<runtime::Executor>> Prepare(const proto::Model& model,
                                                      const VerifyOptions& verify);

/// check's analysis of the original: its combined condition decides where samples may bind
/// the symbols. A model the analysis cannot take gives none.
std::optional<analysis::Analysis> AnalyzeOriginal(const proto::Model& original);

/// The analysis' combined condition, or none (no constraint) when there is no analysis or its
/// conditions contradict each other.
broadcast::ConditionSet UsableCondition(const std::optional<analysis::Analysis>& a);

/// Local mode: every broadcasting node of the original against its rewrite (the rewritten
/// node and the nodes a rewrite inserted before it), each as a small model of its own.
std::vector<LocalResult> LocalVerify(const proto::Model& original, const proto::Model& rewritten,
                                     const VerifyOptions& options, const runtime::Tolerance& tolerance);

}  // namespace onnx_bcast::verify::internal

#endif  // ONNX_BCAST_VERIFY_INTERNAL_H_
