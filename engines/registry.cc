// Engine adapters by name.
#include "engines/registry.h"

#include <cstdlib>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#ifdef BCAST_WITH_OPENCV
#include "engines/opencv_engine.h"
#endif
#ifdef BCAST_WITH_NCNN
#include "engines/ncnn_engine.h"
#endif

namespace onnx_bcast::engines {

namespace {

// BCAST_ENGINES=opencv,ncnn (or "none") keeps only those of the engines built in: what a machine
// without the others prints (the docs' examples run as CI's machine, which has OpenCV only).
bool Enabled(std::string_view name) {
  const char* env = std::getenv("BCAST_ENGINES");
  if (env == nullptr) return true;
  for (absl::string_view e : absl::StrSplit(env, ',', absl::SkipWhitespace())) {
    if (absl::StripAsciiWhitespace(e) == absl::string_view(name.data(), name.size())) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> EngineNames() {
  std::vector<std::string> names;
#ifdef BCAST_WITH_OPENCV
  if (Enabled("opencv")) names.push_back("opencv");
#endif
#ifdef BCAST_WITH_NCNN
  if (Enabled("ncnn")) names.push_back("ncnn");
#endif
  return names;
}

absl::StatusOr<EngineFactory> FindEngine(std::string_view name) {
  if (!Enabled(name)) {
    return absl::NotFoundError(
        absl::StrCat("engine '", std::string(name), "' is left out by BCAST_ENGINES"));
  }
#ifdef BCAST_WITH_OPENCV
  if (name == "opencv") {
    return EngineFactory(
        []() -> absl::StatusOr<std::unique_ptr<EngineAdapter>> { return MakeOpenCvEngine(); });
  }
#endif
#ifdef BCAST_WITH_NCNN
  if (name == "ncnn") {
    return EngineFactory(
        []() -> absl::StatusOr<std::unique_ptr<EngineAdapter>> { return MakeNcnnEngine(); });
  }
#endif
  const std::vector<std::string> names = EngineNames();
  return absl::NotFoundError(absl::StrCat("unknown engine '", std::string(name), "' (built in: ",
                                          names.empty()
                                              ? "none; install libopencv-dnn-dev or build ncnn "
                                                "(scripts/engines/build-ncnn.sh) and reconfigure"
                                              : absl::StrJoin(names, ", "),
                                          ")"));
}

}  // namespace onnx_bcast::engines
