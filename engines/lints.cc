// The engines' portability lints (engines/lints.h).
#include "engines/lints.h"

#include "engines/ncnn_rules.h"

namespace onnx_bcast::engines {

std::vector<analysis::BinaryLint> EngineLints() { return {&NcnnOuterAxisLint}; }

}  // namespace onnx_bcast::engines
