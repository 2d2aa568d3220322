// libFuzzer harness: load + the executor on random inputs (driver::Run, the run sequence of the
// CLI and the API), every tensor bounded by a small element limit and the run by a deadline
// (kernels are not interrupted, but a Loop with a huge trip count stops between nodes).
#include "driver/run.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace driver = onnx_bcast::driver;
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  driver::RunRequest request;
  request.executor.load.max_tensor_elements = onnx_bcast::fuzz::kRunMaxElements;
  request.executor.max_tensor_elements = onnx_bcast::fuzz::kRunMaxElements;
  request.executor.timeout_seconds = 2;
  request.inputs.max_elements = onnx_bcast::fuzz::kRunMaxElements;
  (void)driver::Run(*model, request);
  return 0;
}
