// Early-return helpers for absl::Status / absl::StatusOr. Debian 12's abseil (20220623) ships
// no public status macros (absl/status/status_macros.h is newer and internal), so we keep our
// own two here, in the shape abseil and XLA use.
//
//   BCAST_RETURN_IF_ERROR(expr);            // expr is an absl::Status; returns it if not ok
//   BCAST_ASSIGN_OR_RETURN(lhs, expr);      // expr is an absl::StatusOr<T>; returns its
//                                           // status if not ok, else moves the value into lhs
//
// `lhs` may declare (`auto x`, `const Tensor& t`) or assign (`x`, `*out`). The error is
// returned unchanged: callers that add context still do so by hand.
#ifndef ONNX_BCAST_SUPPORT_STATUS_MACROS_H_
#define ONNX_BCAST_SUPPORT_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define BCAST_RETURN_IF_ERROR(expr)                     \
  do {                                                  \
    ::absl::Status bcast_status_macro_status_ = (expr); \
    if (!bcast_status_macro_status_.ok()) {             \
      return bcast_status_macro_status_;                \
    }                                                   \
  } while (false)

#define BCAST_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define BCAST_STATUS_MACROS_CONCAT_(x, y) BCAST_STATUS_MACROS_CONCAT_INNER_(x, y)

#define BCAST_ASSIGN_OR_RETURN(lhs, expr)                                                          \
  BCAST_ASSIGN_OR_RETURN_IMPL_(BCAST_STATUS_MACROS_CONCAT_(bcast_status_or_value_, __LINE__), lhs, \
                               expr)

#define BCAST_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) {                                   \
    return std::move(statusor).status();                  \
  }                                                       \
  lhs = *std::move(statusor)

#endif  // ONNX_BCAST_SUPPORT_STATUS_MACROS_H_
