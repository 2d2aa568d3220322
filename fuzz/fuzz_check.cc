// libFuzzer harness: load + the `check` analysis through the driver (libonnx shape inference,
// our broadcast rules, the lint, value_info annotation) and both report formats.
#include "driver/driver.h"
#include "fuzz/fuzz_common.h"
#include "report/check_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace report = onnx_bcast::report;
  namespace driver = onnx_bcast::driver;
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  onnx::ModelProto annotated;
  driver::CheckRequest request;
  request.analysis.lint = true;
  request.annotated = &annotated;
  absl::StatusOr<driver::CheckOutcome> outcome = driver::Check(*model, request);
  if (!outcome.ok()) return 0;
  (void)report::FormatCheckText(outcome->analysis, "<fuzz>", true);
  (void)report::FormatCheckJson(outcome->analysis, "<fuzz>", true);
  return 0;
}
