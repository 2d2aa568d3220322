// libFuzzer harness: ONNX text form (.onnxtxt) -> ParseModelText (the nesting pre-check, libonnx's
// parser, load validation) -> the structural graph checks the CLI runs next. An accepted model
// must serialize and print again. Nesting uses the CLI's default limit, not the tighter one of
// the binary harnesses, so the text parser's own bound is what stops deep brackets.
#include <cstdlib>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "proto/onnx_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace proto = onnx_bcast::proto;
  proto::Limits limits = onnx_bcast::fuzz::FuzzLimits();
  limits.max_nesting = proto::Limits().max_nesting;
  absl::StatusOr<proto::Model> model =
      proto::ParseModelText(std::string_view(reinterpret_cast<const char*>(data), size),
                            "<fuzz>.onnxtxt", onnx_bcast::fuzz::kNoDataDir, limits);
  if (!model.ok()) return 0;
  if (!proto::CheckGraphStructure(*model).ok()) return 0;
  if (!proto::SerializeModel(model->proto).ok()) std::abort();
  (void)proto::PrintGraph(model->proto.graph());
  return 0;
}
