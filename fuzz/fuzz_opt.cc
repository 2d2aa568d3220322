// libFuzzer harness: load + `opt --target none` (the pipeline that rewrites the most) and
// `opt --target ncnn` (fold-constants, which runs constant parts of the model on the executor,
// legalize-measured with the measured ncnn table and the run-time shape check) + each target's
// violation scan + serialization to memory, which is what `opt` saves.
#include <cstdlib>
#include <vector>

#include "driver/driver.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace passes = onnx_bcast::passes;
  static const passes::ResolvedPipeline none = passes::ResolvePipeline({"none", "", {}}).value();
  static const passes::ResolvedPipeline ncnn = passes::ResolvePipeline({"ncnn", "", {}}).value();
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  for (const passes::ResolvedPipeline* pipeline : {&none, &ncnn}) {
    onnx_bcast::proto::Model copy = *model;
    onnx_bcast::report::OptReport report;
    // The pipeline and the target check, as opt runs them.
    if (!onnx_bcast::driver::Optimize(&copy, *pipeline, {}, &report).ok()) continue;
    if (!onnx_bcast::proto::SerializeModel(copy.proto).ok()) std::abort();
  }
  return 0;
}
