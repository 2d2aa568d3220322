// libFuzzer harness: load + `opt --target none` (the pipeline that rewrites the most) + the
// target's violation scan + serialization to memory, which is what `opt` saves.
#include <cstdlib>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "passes/pass_manager.h"
#include "passes/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace passes = onnx_bcast::passes;
  static const passes::TargetProfile* const target = passes::FindTarget("none");
  static const std::vector<const passes::PassInfo*> pipeline =
      passes::ResolvePasses(target->passes).value();
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  passes::PipelineOptions options;
  options.pass_options.target = target;
  std::vector<passes::PassRun> runs;
  const absl::Status status = passes::RunPipeline(&*model, pipeline, options, &runs);
  if (!status.ok()) return 0;
  (void)passes::FindTargetViolations(*model, *target);
  if (!onnx_bcast::proto::SerializeModel(model->proto).ok()) std::abort();
  return 0;
}
