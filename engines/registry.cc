// Engine adapters by name.
#include "engines/registry.h"

#include <cstdlib>
#include <iterator>
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
#ifdef BCAST_WITH_MNN
#include "engines/mnn_engine.h"
#endif

namespace onnx_bcast::engines {

namespace {

// BCAST_ENGINES=opencv,ncnn,mnn (or "none") keeps only those of the engines built in: what a machine
// without the others prints (the docs' examples run as CI's machine, which has OpenCV only).
bool Enabled(std::string_view name) {
  const char* env = std::getenv("BCAST_ENGINES");
  if (env == nullptr) return true;
  for (absl::string_view e : absl::StrSplit(env, ',', absl::SkipWhitespace())) {
    if (absl::StripAsciiWhitespace(e) == absl::string_view(name.data(), name.size())) return true;
  }
  return false;
}

// The adapters built in, one line each, in the order EngineNames() lists them: the one place a
// new engine's adapter is named (its target comes from its profile, engines/profiles/).
constexpr EngineEntry kEngines[] = {
#ifdef BCAST_WITH_OPENCV
    {"opencv", &MakeOpenCvEngine},
#endif
#ifdef BCAST_WITH_NCNN
    {"ncnn", &MakeNcnnEngine},
#endif
#ifdef BCAST_WITH_MNN
    {"mnn", &MakeMnnEngine},
#endif
    {nullptr, nullptr}};

absl::Span<const EngineEntry> BuiltinEngines() {
  return absl::MakeConstSpan(kEngines, std::size(kEngines) - 1);
}

}  // namespace

std::vector<std::string> EngineNames() { return EngineNamesIn(BuiltinEngines()); }

std::vector<std::string> EngineNamesIn(absl::Span<const EngineEntry> engines) {
  std::vector<std::string> names;
  for (const EngineEntry& e : engines) {
    if (Enabled(e.name)) names.push_back(e.name);
  }
  return names;
}

absl::StatusOr<EngineFactory> FindEngine(std::string_view name) {
  return FindEngineIn(BuiltinEngines(), name);
}

absl::StatusOr<EngineFactory> FindEngineIn(absl::Span<const EngineEntry> engines,
                                           std::string_view name) {
  if (!Enabled(name)) {
    return absl::NotFoundError(
        absl::StrCat("engine '", std::string(name), "' is left out by BCAST_ENGINES"));
  }
  for (const EngineEntry& e : engines) {
    if (name == e.name) {
      return EngineFactory([make = e.make]() -> absl::StatusOr<std::unique_ptr<EngineAdapter>> {
        return make();
      });
    }
  }
  const std::vector<std::string> names = EngineNamesIn(engines);
  return absl::NotFoundError(absl::StrCat("unknown engine '", std::string(name), "' (built in: ",
                                          names.empty()
                                              ? "none; install libopencv-dnn-dev or build ncnn "
                                                "(scripts/engines/build-ncnn.sh) or MNN "
                                                "(scripts/engines/build-mnn.sh) and reconfigure"
                                              : absl::StrJoin(names, ", "),
                                          ")"));
}

}  // namespace onnx_bcast::engines
