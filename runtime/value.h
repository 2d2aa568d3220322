// A runtime value: a tensor, a sequence of tensors, or an optional that may be empty
// (ONNX's Sequence and Optional types).
#ifndef ONNX_BCAST_RUNTIME_VALUE_H_
#define ONNX_BCAST_RUNTIME_VALUE_H_

#include <memory>
#include <vector>

#include "runtime/tensor.h"

namespace onnx_bcast::runtime {

/// What flows along a graph edge. Tensors are held by shared_ptr so that Identity-like ops,
/// sequences and subgraph outputs can pass them on without copying.
struct Value {
  enum class Kind { kNone, kTensor, kSequence, kOptionalNone };
  Kind kind = Kind::kNone;
  std::shared_ptr<Tensor> tensor;
  std::vector<std::shared_ptr<Tensor>> sequence;
  /// For an empty sequence or optional: the element dtype when known.
  DType elem_type = DType::kUndefined;

  static Value Of(std::shared_ptr<Tensor> t) {
    Value v;
    v.kind = Kind::kTensor;
    v.tensor = std::move(t);
    return v;
  }
  static Value Sequence(std::vector<std::shared_ptr<Tensor>> items, DType elem = DType::kUndefined) {
    Value v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(items);
    v.elem_type = elem;
    return v;
  }
  static Value EmptyOptional(DType elem = DType::kUndefined) {
    Value v;
    v.kind = Kind::kOptionalNone;
    v.elem_type = elem;
    return v;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_none() const { return kind == Kind::kNone || kind == Kind::kOptionalNone; }
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_VALUE_H_
