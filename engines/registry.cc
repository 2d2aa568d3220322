// Engine adapters by name.
#include "engines/registry.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#ifdef BCAST_WITH_OPENCV
#include "engines/opencv_engine.h"
#endif
#ifdef BCAST_WITH_NCNN
#include "engines/ncnn_engine.h"
#endif
#ifdef BCAST_WITH_MNN
#include "engines/mnn_engine.h"
#endif

namespace onnx_bcast::engines {

std::vector<std::string> EngineNames() {
  std::vector<std::string> names;
#ifdef BCAST_WITH_OPENCV
  names.push_back("opencv");
#endif
#ifdef BCAST_WITH_NCNN
  names.push_back("ncnn");
#endif
#ifdef BCAST_WITH_MNN
  names.push_back("mnn");
#endif
  return names;
}

absl::StatusOr<EngineFactory> FindEngine(std::string_view name) {
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
#ifdef BCAST_WITH_MNN
  if (name == "mnn") {
    return EngineFactory(
        []() -> absl::StatusOr<std::unique_ptr<EngineAdapter>> { return MakeMnnEngine(); });
  }
#endif
  const std::vector<std::string> names = EngineNames();
  return absl::NotFoundError(absl::StrCat("unknown engine '", std::string(name), "' (built in: ",
                                          names.empty()
                                              ? "none; install libopencv-dnn-dev or build ncnn "
                                                "(scripts/engines/build-ncnn.sh) or MNN "
                                                "(scripts/engines/build-mnn.sh) and reconfigure"
                                              : absl::StrJoin(names, ", "),
                                          ")"));
}

}  // namespace onnx_bcast::engines
