// What both models of a verification accept (issue 31): their declared input shapes side by
// side. A dim one model declares as a number and the other leaves symbolic (`opt --dim N=1`
// wrote [1,...] where the original says [N,...]) is bound to that number in both, so that no
// sample feeds either model an input it does not accept; the dims both leave free are the only
// ones the samples vary. Explicit bindings (verify --dim, the API's and Python's dims=) are
// checked against both declarations. Two models that accept no common input, or a binding
// that contradicts a declared shape, are usage errors naming the dims.
//
// Requires: two models that passed driver::Load/Admit. Guarantees: with the bindings applied
// to both, they declare the same number at every dim either declares as a number.
#ifndef ONNX_BCAST_VERIFY_COMMON_INPUTS_H_
#define ONNX_BCAST_VERIFY_COMMON_INPUTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/model_io.h"

namespace onnx_bcast::verify {

/// One symbol fixed for the whole verification, and who fixed it.
struct BoundDim {
  std::string symbol;  ///< a dim_param, or "<input>:<axis>" for an unnamed input dim
  int64_t value = 0;
  /// "the rewritten model", "the original model", or the explicit option's label ("--dim").
  std::string by;
};

/// The bindings that make every input both models accept the same: every dim that one model
/// declares as a number and the other leaves symbolic or unnamed (in their main graphs'
/// declared input shapes), and every `explicit_dims` symbol (labelled `dims_label` in messages
/// and in BoundDim::by), in symbol order. Apply them to each model with
/// proto::ApplyDimBindings (BoundValues). Errors (IsUsageError): a name in `explicit_dims` that
/// neither model's inputs have (the message lists the symbols they have), a value below 1, an
/// explicit value or declared number that contradicts the other model's declared number, one
/// symbol pinned to two numbers, or an input whose declared rank differs between the models.
absl::StatusOr<std::vector<BoundDim>> CommonInputBindings(
    const proto::Model& original, const proto::Model& rewritten,
    const std::map<std::string, int64_t>& explicit_dims, const std::string& dims_label);

/// Symbol -> value of `bound`.
std::map<std::string, int64_t> BoundValues(const std::vector<BoundDim>& bound);

/// "N bound to 1 by the rewritten model, T bound to 4 by --dim" (empty when none).
std::string BoundDimsToString(const std::vector<BoundDim>& bound);

/// Marks `status` as a usage error of the verification (exit 64 in the CLI): the two models
/// accept no common input, or an explicit binding does not fit them.
absl::Status UsageError(std::string message);
/// Marks `status` as an input (test data) that does not fit a model's declaration (exit 65 in
/// the CLI, as `run` refuses it).
absl::Status BadInputError(const absl::Status& status);
bool IsUsageError(const absl::Status& status);
bool IsBadInputError(const absl::Status& status);

}  // namespace onnx_bcast::verify

#endif  // ONNX_BCAST_VERIFY_COMMON_INPUTS_H_
