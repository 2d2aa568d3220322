// The newcomer walkthrough's last step (issue 31 item 6): run a model written by
// `opt --target opencv` on OpenCV DNN through the project's adapter, on seeded random inputs
// shaped by its declaration, and compare every output with our executor on the ORIGINAL model
// fed the same inputs.
//   opencv_run ORIGINAL REWRITTEN
// Prints one line, "opencv <version>: runs and matches (K outputs, max abs error E)", and exits
// 0 (judged by engines/judge.h against a float64 reference); exits 1 naming the refusal, the
// output that differs, or a reference output that cannot tell right from wrong (one value
// everywhere, or no finite value: NaN matches NaN); 2 when a model cannot be read.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engines/judge.h"
#include "engines/opencv_engine.h"
#include "proto/model_io.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "tests/support/reference_guard.h"

namespace onnx_bcast {
namespace {

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "opencv_run: %s\n", message.c_str());
  return code;
}

int Main(int argc, char** argv) {
  if (argc != 3) return Fail(64, "usage: opencv_run ORIGINAL REWRITTEN");
  absl::StatusOr<proto::Model> original = proto::LoadModel(argv[1]);
  absl::StatusOr<proto::Model> rewritten = proto::LoadModel(argv[2]);
  if (!original.ok() || !rewritten.ok()) {
    return Fail(2, std::string((!original.ok() ? original : rewritten).status().message()));
  }
  absl::StatusOr<std::shared_ptr<const runtime::Model>> ours = runtime::LoadRuntimeModel(*original);
  absl::StatusOr<std::shared_ptr<const runtime::Model>> theirs = runtime::LoadRuntimeModel(*rewritten);
  if (!ours.ok() || !theirs.ok()) {
    return Fail(2, std::string((!ours.ok() ? ours : theirs).status().message()));
  }
  // The inputs the rewritten model declares (static after --dim), fed to both.
  runtime::RandomInputOptions random;
  random.seed = 7;
  absl::StatusOr<runtime::Feeds> feeds = runtime::RandomInputs(*(*theirs)->main, random);
  if (!feeds.ok()) return Fail(2, std::string(feeds.status().message()));
  absl::StatusOr<runtime::Reference> reference = runtime::ComputeReference(*original, *feeds);
  if (!reference.ok()) {
    return Fail(2, absl::StrCat("our executor: ", reference.status().message()));
  }
  // An output with one value everywhere, or none finite, would match whatever OpenCV computes.
  if (const std::string why = test_support::FirstUninformativeOutput(*reference); !why.empty()) {
    return Fail(1, absl::StrCat(why, ": the comparison proves nothing"));
  }

  std::unique_ptr<engines::EngineAdapter> engine = engines::MakeOpenCvEngine();
  absl::StatusOr<std::string> bytes = proto::ReadFileBytes(argv[2]);
  if (!bytes.ok()) return Fail(2, std::string(bytes.status().message()));
  if (absl::Status s = engine->Load(*bytes); !s.ok()) {
    return Fail(1, absl::StrCat("opencv ", engine->version(), " refuses the model: ", s.message()));
  }
  engines::NamedTensors inputs;
  for (const auto& [name, value] : *feeds) inputs.emplace_back(name, value.tensor->Clone());
  const std::vector<std::string>& names = (*ours)->main->outputs;
  absl::StatusOr<engines::NamedTensors> outputs = engine->Run(inputs, names);
  if (!outputs.ok()) {
    return Fail(1, absl::StrCat("opencv ", engine->version(),
                                " fails to run the model: ", outputs.status().message()));
  }
  engines::EngineOutcome ran;
  ran.kind = engines::OutcomeKind::kRan;
  ran.outputs = *std::move(outputs);
  const engines::Judgement j = engines::JudgeOutcome(ran, *reference);
  if (!j.matches()) {
    return Fail(1,
                absl::StrCat("opencv ", engine->version(), " runs the model but differs: ", j.why));
  }
  const double max_abs = j.max_abs_error;
  std::printf("opencv %s: runs and matches (%zu outputs, max abs error %.3g)\n",
              engine->version().c_str(), names.size(), max_abs);
  return 0;
}

}  // namespace
}  // namespace onnx_bcast

int main(int argc, char** argv) { return onnx_bcast::Main(argc, argv); }
