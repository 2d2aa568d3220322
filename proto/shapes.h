// Conversions between ONNX type/tensor protos and the broadcast library's symbolic shapes, and
// reading small integer constants (shape inputs) whatever their encoding.
#ifndef ONNX_BCAST_PROTO_SHAPES_H_
#define ONNX_BCAST_PROTO_SHAPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "broadcast/shape.h"
#include "proto/onnx.h"

namespace onnx_bcast::proto {

/// The shape of a tensor type: dim_value -> value, dim_param -> symbol, neither -> unknown;
/// no shape at all -> unknown rank.
broadcast::Shape ShapeOfType(const onnx::TypeProto& type);

/// How a symbol reads in a dim_param: its bare name (ShapeOfType reads it back as the same
/// symbol), or as people read it (Dim::ToString: backquoted unless a plain name), as the
/// shapes analysis writes value_info. Expressions are printed either way.
enum class SymbolText { kBareName, kPrinted };

/// Writes `shape` into `type`'s tensor shape (unknown rank clears it; an unknown dim has
/// neither field).
void SetShapeOfType(const broadcast::Shape& shape, onnx::TypeProto* type,
                    SymbolText symbols = SymbolText::kBareName);

/// The dims of an initializer or constant.
broadcast::Shape ShapeOfTensor(const onnx::TensorProto& tensor);

/// The values of an integer tensor (INT64 or INT32), from typed fields, raw data or external
/// data resolved against `base_dir`. Refuses more than `max_values` elements.
absl::StatusOr<std::vector<int64_t>> ReadIntValues(const onnx::TensorProto& tensor,
                                                   const std::string& base_dir,
                                                   int64_t max_values = 1 << 16);

}  // namespace onnx_bcast::proto

#endif  // ONNX_BCAST_PROTO_SHAPES_H_
