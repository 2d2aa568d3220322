// The engines this build can drive, by name. The one place that knows which adapters exist;
// every other layer takes an EngineFactory.
#ifndef ONNX_BCAST_ENGINES_REGISTRY_H_
#define ONNX_BCAST_ENGINES_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "engines/engine.h"

namespace onnx_bcast::engines {

/// One adapter of the registry: its name (the target its profile gives, engines/profiles/
/// `<name>-<version>.profile`) and how to make one.
struct EngineEntry {
  const char* name;
  std::unique_ptr<EngineAdapter> (*make)();
};

/// Names of the engines built in (OpenCV only when its development files were found), less
/// those the environment variable BCAST_ENGINES leaves out: "opencv,ncnn" keeps only those,
/// "none" keeps none (a machine without them; the docs' examples run that way).
std::vector<std::string> EngineNames();

/// The factory of engine `name`. NotFound lists the engines built in.
absl::StatusOr<EngineFactory> FindEngine(std::string_view name);

/// EngineNames and FindEngine over `engines` instead of the adapters built in (a test adds a
/// scripted engine the way a new adapter is added: one entry).
std::vector<std::string> EngineNamesIn(absl::Span<const EngineEntry> engines);
absl::StatusOr<EngineFactory> FindEngineIn(absl::Span<const EngineEntry> engines,
                                           std::string_view name);

}  // namespace onnx_bcast::engines

#endif  // ONNX_BCAST_ENGINES_REGISTRY_H_
