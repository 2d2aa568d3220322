// The engines' portability lints for `check --lint`: where an engine's own broadcast rule pairs
// elements differently from numpy. The driver hands them to the analysis
// (AnalysisOptions::binary_lints), which names no engine itself.
#ifndef ONNX_BCAST_ENGINES_LINTS_H_
#define ONNX_BCAST_ENGINES_LINTS_H_

#include <vector>

#include "analysis/shape_propagation.h"

namespace onnx_bcast::engines {

/// Every engine's binary-broadcast lint, in the order `check --lint` lists them.
std::vector<analysis::BinaryLint> EngineLints();

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_LINTS_H_
