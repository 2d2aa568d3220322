// libFuzzer harness: load + `opt --target none` (the pipeline that rewrites the most) + the
// target's violation scan + serialization to memory, which is what `opt` saves.
#include <cstdlib>
#include <vector>

#include "driver/driver.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace passes = onnx_bcast::passes;
  static const passes::ResolvedPipeline pipeline = passes::ResolvePipeline({"none", "", {}}).value();
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  passes::OptReport report;
  // The pipeline and the target check, as opt runs them.
  if (!onnx_bcast::driver::Optimize(&*model, pipeline, {}, &report).ok()) return 0;
  if (!onnx_bcast::proto::SerializeModel(model->proto).ok()) std::abort();
  return 0;
}
