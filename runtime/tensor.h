// Tensor: a dtype, a shape and either owned 64-byte-aligned storage or a borrowed pointer.
// Dense row-major only; rank 0 (one element) and zero-size shapes are valid.
#ifndef ONNX_BCAST_RUNTIME_TENSOR_H_
#define ONNX_BCAST_RUNTIME_TENSOR_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/dtype.h"

namespace onnx_bcast::runtime {

/// Alignment of owned storage, in bytes (one cache line, enough for AVX-512 loads).
inline constexpr size_t kTensorAlignment = 64;

/// Number of elements of `shape` (1 for rank 0), or an error for negative dims or overflow.
absl::StatusOr<int64_t> ShapeElementCount(absl::Span<const int64_t> shape);

/// "[2,3,4]" ("[]" for rank 0).
std::string ShapeToString(absl::Span<const int64_t> shape);

/// A dense row-major tensor. Move-only; use Clone() for a deep copy.
class Tensor {
 public:
  /// An empty float32 tensor of shape [0] with no storage.
  Tensor();

  /// Allocates zero-filled, 64-byte-aligned storage for `shape`.
  static absl::StatusOr<Tensor> Allocate(DType dtype, std::vector<int64_t> shape);

  /// Wraps caller-owned memory; `data` must stay valid and hold num_elements() values for
  /// the tensor's lifetime. Kernels write through it when the tensor is an output.
  static absl::StatusOr<Tensor> Borrow(DType dtype, std::vector<int64_t> shape, void* data);

  /// Allocates a tensor of `shape` holding `values` (row-major). T's dtype is DTypeOf<T>().
  template <class T>
  static absl::StatusOr<Tensor> FromValues(std::vector<int64_t> shape, absl::Span<const T> values);
  template <class T>
  static absl::StatusOr<Tensor> FromValues(std::vector<int64_t> shape,
                                           std::initializer_list<T> values) {
    return FromValues<T>(std::move(shape), absl::Span<const T>(values.begin(), values.size()));
  }

  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  /// A deep copy with owned storage.
  Tensor Clone() const;

  /// Gives this tensor `dtype` and `shape`, keeping its owned storage when that is large
  /// enough (contents then unspecified). Returns false, changing nothing, when it is not owned
  /// or too small; the caller then allocates. This is how the executor reuses buffers.
  bool ReuseAs(DType dtype, const std::vector<int64_t>& shape);

  /// Bytes of owned storage (0 when borrowed).
  size_t capacity_bytes() const { return capacity_bytes_; }

  /// Owned buffers allocated so far by this process (tests prove buffer reuse with it).
  static int64_t AllocationCount();

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t element_size() const { return DTypeSize(dtype_); }
  size_t byte_size() const { return static_cast<size_t>(num_elements_) * element_size(); }
  /// True when the storage is owned (Allocate/FromValues/Clone), false when borrowed.
  bool owns_data() const { return owned_ != nullptr; }

  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  /// Typed pointer; T must be the storage type of dtype() (checked in debug builds).
  template <class T>
  T* data() {
    assert(DTypeOf<T>() == dtype_);
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    assert(DTypeOf<T>() == dtype_);
    return static_cast<const T*>(data_);
  }
  template <class T>
  absl::Span<T> values() {
    return absl::Span<T>(data<T>(), static_cast<size_t>(num_elements_));
  }
  template <class T>
  absl::Span<const T> values() const {
    return absl::Span<const T>(data<T>(), static_cast<size_t>(num_elements_));
  }

  /// "float32[2,3]".
  std::string DebugString() const;

 private:
  struct AlignedFree {
    AlignedFree() : alignment(kTensorAlignment) {}
    explicit AlignedFree(size_t a) : alignment(a) {}
    size_t alignment;  // what the storage was allocated with
    void operator()(std::byte* p) const;
  };

  Tensor(DType dtype, std::vector<int64_t> shape, int64_t num_elements);

  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_ = {0};
  int64_t num_elements_ = 0;
  std::unique_ptr<std::byte[], AlignedFree> owned_;
  size_t capacity_bytes_ = 0;
  void* data_ = nullptr;
};

template <class T>
absl::StatusOr<Tensor> Tensor::FromValues(std::vector<int64_t> shape, absl::Span<const T> values) {
  absl::StatusOr<Tensor> tensor = Allocate(DTypeOf<T>(), std::move(shape));
  if (!tensor.ok()) return tensor.status();
  if (static_cast<int64_t>(values.size()) != tensor->num_elements()) {
    return absl::InvalidArgumentError("Tensor::FromValues: " + std::to_string(values.size()) +
                                      " values for shape " + ShapeToString(tensor->shape()));
  }
  T* out = tensor->data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return tensor;
}

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_TENSOR_H_
