// libFuzzer harness: bytes -> ParseModelBytes (protobuf parse, limits, load validation).
// Any outcome but a crash, a sanitizer report or a hang is fine; an accepted model must
// serialize again.
#include <cstdlib>

#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<onnx_bcast::proto::Model> model = onnx_bcast::fuzz::LoadFuzzInput(data, size);
  if (!model.ok()) return 0;
  // A model that loaded is a protobuf we hold in memory: it must round-trip.
  if (!onnx_bcast::proto::SerializeModel(model->proto).ok()) std::abort();
  return 0;
}
