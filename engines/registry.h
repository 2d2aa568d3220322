// The engines this build can drive, by name. The one place that knows which adapters exist;
// every other layer takes an EngineFactory.
#ifndef ONNX_BCAST_ENGINES_REGISTRY_H_
#define ONNX_BCAST_ENGINES_REGISTRY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engines/engine.h"

namespace onnx_bcast::engines {

/// Names of the engines built in (OpenCV only when its development files were found), less
/// those the environment variable BCAST_ENGINES leaves out: "opencv,ncnn" keeps only those,
/// "none" keeps none (a machine without them; the docs' examples run that way).
std::vector<std::string> EngineNames();

/// The factory of engine `name`. NotFound lists the engines built in.
absl::StatusOr<EngineFactory> FindEngine(std::string_view name);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_REGISTRY_H_
