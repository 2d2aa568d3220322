// The verify sequence every entry point shares (the CLI's verify and opt --verify, the public
// API's Verify and through it Python): two admitted models compared on our executor under one
// deadline for all their runs.
#ifndef ONNX_BCAST_DRIVER_VERIFY_H_
#define ONNX_BCAST_DRIVER_VERIFY_H_

#include "absl/status/statusor.h"
#include "proto/model_io.h"
#include "verify/verify.h"

namespace onnx_bcast::driver {

struct VerifyRequest {
  /// What to compare and how (samples, dims, tolerance, the report naming the pass); its
  /// `budget` is set here when timeout_seconds is.
  verify::VerifyOptions options;
  /// Wall-clock seconds for every run of both models together, from this call on (after
  /// loading); 0: no limit.
  double timeout_seconds = 0;
};

/// verify::Verify of two models admitted by driver::Load, Parse or Admit. Errors: Verify's
/// (verify::IsUsageError and IsBadInputError tell the caller's mistakes apart).
absl::StatusOr<verify::VerifyResult> Verify(const proto::Model& original,
                                            const proto::Model& rewritten,
                                            const VerifyRequest& request);

}  // namespace onnx_bcast::driver

#endif  // ONNX_BCAST_DRIVER_VERIFY_H_
