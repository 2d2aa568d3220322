// Tensor storage: aligned allocation, borrowing, cloning.
#include "runtime/tensor.h"

#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/status_macros.h"

namespace onnx_bcast::runtime {

absl::StatusOr<int64_t> ShapeElementCount(absl::Span<const int64_t> shape) {
  int64_t count = 1;
  bool zero = false;
  for (int64_t dim : shape) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension in shape ", ShapeToString(shape)));
    }
    if (dim == 0) zero = true;
  }
  if (zero) return 0;
  for (int64_t dim : shape) {
    if (count > std::numeric_limits<int64_t>::max() / dim) {
      return absl::InvalidArgumentError(
          absl::StrCat("element count of shape ", ShapeToString(shape), " overflows int64"));
    }
    count *= dim;
  }
  return count;
}

std::string ShapeToString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

namespace {
std::atomic<int64_t> g_allocations{0};

// Buffers of at least two huge pages are aligned to one and offered to the kernel for
// transparent huge pages (Debian's default THP mode is "madvise"): memory-bound kernels
// then take one TLB miss per 2 MiB instead of per 4 KiB, which matters most under nested
// paging in a VM. Purely advisory; a refusal changes nothing.
constexpr size_t kHugePage = size_t{2} << 20;

void AdviseHugePages(std::byte* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const size_t whole = bytes / kHugePage * kHugePage;
  if (whole > 0) madvise(p, whole, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}
}  // namespace

void Tensor::AlignedFree::operator()(std::byte* p) const {
  ::operator delete[](p, std::align_val_t(alignment));
}

Tensor::Tensor() = default;

Tensor::Tensor(DType dtype, std::vector<int64_t> shape, int64_t num_elements)
    : dtype_(dtype), shape_(std::move(shape)), num_elements_(num_elements) {}

absl::StatusOr<Tensor> Tensor::Allocate(DType dtype, std::vector<int64_t> shape) {
  if (!IsSupported(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Allocate: unsupported dtype ", DTypeName(dtype)));
  }
  BCAST_ASSIGN_OR_RETURN(int64_t count, ShapeElementCount(shape));
  const size_t element_size = DTypeSize(dtype);
  if (static_cast<uint64_t>(count) > std::numeric_limits<size_t>::max() / element_size / 2) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Tensor::Allocate: shape ", ShapeToString(shape), " is too large"));
  }
  Tensor tensor(dtype, std::move(shape), count);
  // Round up to whole cache lines and never allocate 0 bytes, so data() is non-null and
  // vector loads past the end of the last line stay inside the allocation.
  size_t bytes = static_cast<size_t>(count) * element_size;
  bytes = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (bytes == 0) bytes = kTensorAlignment;
  const size_t alignment = bytes >= 2 * kHugePage ? kHugePage : kTensorAlignment;
  auto* storage = static_cast<std::byte*>(
      ::operator new[](bytes, std::align_val_t(alignment), std::nothrow));
  if (storage == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("Tensor::Allocate: cannot allocate ", bytes, " bytes"));
  }
  if (alignment == kHugePage) AdviseHugePages(storage, bytes);
  std::memset(storage, 0, bytes);  // first touch, after the advice
  tensor.owned_ = std::unique_ptr<std::byte[], AlignedFree>(storage, AlignedFree{alignment});
  tensor.capacity_bytes_ = bytes;
  tensor.data_ = storage;
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return tensor;
}

int64_t Tensor::AllocationCount() { return g_allocations.load(std::memory_order_relaxed); }

bool Tensor::ReuseAs(DType dtype, const std::vector<int64_t>& shape) {
  if (owned_ == nullptr || !IsSupported(dtype)) return false;
  absl::StatusOr<int64_t> count = ShapeElementCount(shape);
  if (!count.ok()) return false;
  const size_t bytes = static_cast<size_t>(*count) * DTypeSize(dtype);
  if (bytes > capacity_bytes_) return false;
  dtype_ = dtype;
  shape_ = shape;
  num_elements_ = *count;
  return true;
}

absl::StatusOr<Tensor> Tensor::Borrow(DType dtype, std::vector<int64_t> shape, void* data) {
  if (!IsSupported(dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Borrow: unsupported dtype ", DTypeName(dtype)));
  }
  BCAST_ASSIGN_OR_RETURN(int64_t count, ShapeElementCount(shape));
  if (data == nullptr && count != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Tensor::Borrow: null data for non-empty shape ", ShapeToString(shape)));
  }
  Tensor tensor(dtype, std::move(shape), count);
  tensor.data_ = data;
  return tensor;
}

Tensor Tensor::Clone() const {
  // Allocation can only fail here on memory exhaustion, which the caller cannot handle
  // better than a crash either.
  Tensor copy = Allocate(dtype_, shape_).value();
  if (byte_size() != 0) std::memcpy(copy.data_, data_, byte_size());
  return copy;
}

std::string Tensor::DebugString() const {
  return absl::StrCat(DTypeName(dtype_), ShapeToString(shape_));
}

}  // namespace onnx_bcast::runtime
