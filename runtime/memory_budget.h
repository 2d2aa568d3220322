// The memory a run may hold: a byte budget charged when the executor allocates an intermediate
// (OpContext::Allocate) and refunded when its buffer is freed, so the count is what the run
// holds now, not what it ever allocated. Control flow also asks it before stacking the scan
// outputs a Loop or Scan has accumulated.
#ifndef ONNX_BCAST_RUNTIME_MEMORY_BUDGET_H_
#define ONNX_BCAST_RUNTIME_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>

namespace onnx_bcast::runtime {

/// A quarter of the machine's physical memory (sysconf, read once per process), or 4 GiB when
/// the system does not say: what a run may hold by default (--max-memory).
int64_t DefaultMaxMemoryBytes();

/// Live bytes against a limit. Thread-safe; one atomic add per allocation and per free, no
/// per-element work. Shared (shared_ptr) by the executors of one command (verify's two models)
/// and by every buffer it charged, so a buffer that outlives its executor refunds safely.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}

  int64_t limit() const { return limit_; }
  /// Bytes charged and not yet refunded.
  int64_t live() const { return live_.load(std::memory_order_relaxed); }
  /// The largest live() seen.
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }

  /// Refusals so far (TryCharge or WouldFit said no): a caller that sees a run fail with
  /// ResourceExhausted can tell the budget from the other limits.
  int64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

  /// Charges `bytes` unless live() would then exceed the limit (nothing charged then).
  bool TryCharge(int64_t bytes) {
    const int64_t now = live_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    if (now > limit_) {
      live_.fetch_sub(bytes, std::memory_order_relaxed);
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    int64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    return true;
  }
  void Refund(int64_t bytes) { live_.fetch_sub(bytes, std::memory_order_relaxed); }
  /// True when `bytes` more would still fit (nothing charged; a no counts as a refusal).
  bool WouldFit(int64_t bytes) {
    if (bytes <= limit_ - live()) return true;
    refusals_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

 private:
  const int64_t limit_;
  std::atomic<int64_t> live_{0};
  std::atomic<int64_t> peak_{0};
  std::atomic<int64_t> refusals_{0};
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_MEMORY_BUDGET_H_
