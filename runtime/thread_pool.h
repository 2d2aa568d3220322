// A small reusable thread pool for kernels: blocking ParallelFor over task indices, with
// the calling thread taking part so a busy or absent worker never stalls a call.
#ifndef ONNX_BCAST_RUNTIME_THREAD_POOL_H_
#define ONNX_BCAST_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace onnx_bcast::runtime {

/// Fixed set of worker threads. Thread-safe; ParallelFor may be called from several
/// threads at once and from inside a task (the caller then does the work itself).
class ThreadPool {
 public:
  /// Starts `num_workers` threads (0 is valid: everything runs on the caller).
  explicit ThreadPool(int num_workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_workers() const { return static_cast<int>(workers_.size()); }

  /// Runs fn(0) .. fn(num_tasks - 1) on up to `max_parallelism` threads (the caller counts
  /// as one) and returns when all have finished. Task order is unspecified.
  void ParallelFor(int64_t num_tasks, int max_parallelism, const std::function<void(int64_t)>& fn);

  /// ParallelFor calls so far that handed tasks to workers (not those run on the caller
  /// alone); tests use it to prove that small kernels never touch the pool.
  int64_t handoffs() const { return handoffs_.load(std::memory_order_relaxed); }

  /// A process-wide pool with max(1, hardware_concurrency - 1) workers, created on first use.
  static ThreadPool& Default();

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  std::atomic<int64_t> queued_{0};  ///< queue_.size(), read without the lock by polling workers
  bool stopping_ = false;
  std::vector<std::thread> workers_;
  std::atomic<int64_t> handoffs_{0};
};

}  // namespace onnx_bcast::runtime

#endif  // ONNX_BCAST_RUNTIME_THREAD_POOL_H_
