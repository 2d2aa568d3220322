// libFuzzer harness: load + the `check` analysis (libonnx shape inference, our broadcast rules,
// the lint, value_info annotation) and both report formats.
#include "fuzz/fuzz_common.h"
#include "passes/check_report.h"
#include "passes/shape_propagation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace passes = onnx_bcast::passes;
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  passes::AnalysisOptions options;
  options.lint = true;
  onnx::ModelProto annotated;
  absl::StatusOr<passes::Analysis> analysis =
      passes::AnalyzeBroadcasts(*model, options, &annotated);
  if (!analysis.ok()) return 0;
  (void)passes::FormatCheckText(*analysis, "<fuzz>", true);
  (void)passes::FormatCheckJson(*analysis, "<fuzz>", true);
  return 0;
}
