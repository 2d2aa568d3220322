#include "driver/verify.h"

#include "runtime/run_budget.h"

namespace onnx_bcast::driver {

absl::StatusOr<verify::VerifyResult> Verify(const proto::Model& original,
                                            const proto::Model& rewritten,
                                            const VerifyRequest& request) {
  verify::VerifyOptions options = request.options;
  // One deadline for both models' runs, started once they are loaded.
  const runtime::RunBudget budget(request.timeout_seconds);
  if (request.timeout_seconds > 0) options.budget = &budget;
  return verify::Verify(original, rewritten, options);
}

}  // namespace onnx_bcast::driver
