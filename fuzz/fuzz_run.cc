// libFuzzer harness: load + the executor on random inputs, every tensor bounded by a small
// element limit and the run by a deadline (kernels are not interrupted, but a Loop with a huge
// trip count stops between nodes).
#include <memory>

#include "absl/time/clock.h"
#include "fuzz/fuzz_common.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rt = onnx_bcast::rt;
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  rt::LoadOptions load;
  load.max_tensor_elements = onnx_bcast::fuzz::kRunMaxElements;
  absl::StatusOr<std::shared_ptr<const rt::Model>> loaded = rt::LoadRuntimeModel(*model, load);
  if (!loaded.ok()) return 0;
  rt::RunOptions options;
  options.max_tensor_elements = onnx_bcast::fuzz::kRunMaxElements;
  absl::StatusOr<std::unique_ptr<rt::Executor>> exec = rt::Executor::Create(*loaded, options);
  if (!exec.ok()) return 0;
  rt::RandomInputOptions random;
  random.max_elements = onnx_bcast::fuzz::kRunMaxElements;
  absl::StatusOr<rt::Feeds> feeds = rt::RandomInputs((*exec)->graph(), random);
  if (!feeds.ok()) return 0;
  (*exec)->set_deadline(absl::Now() + absl::Seconds(2));
  (void)(*exec)->Run(*feeds);
  return 0;
}
