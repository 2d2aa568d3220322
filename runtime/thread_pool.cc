// ThreadPool: a mutex-guarded job queue; ParallelFor hands out task indices by atomic counter.
#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace onnx_bcast::runtime {
namespace {

// How long a worker that ran a job keeps polling for the next one, and a caller for its
// helpers to finish, before sleeping on the condition variable: a thread woken from sleep
// starts late, and a run's parallel sections come tens of microseconds apart. Two tasks of
// 65 us each with 65 us of serial work between sections (2026-11-29, the project VM, real-time
// priority): 96 us a section with sleeping at once, 66 us (the ideal) polling. Bounded, so an
// idle pool sleeps; onnxruntime's pool polls likewise.
constexpr std::chrono::microseconds kPollFor{50};

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

// Polls `ready` until it returns true or kPollFor has passed; true when it did.
template <class Ready>
bool PollFor(Ready&& ready) {
  const auto until = std::chrono::steady_clock::now() + kPollFor;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    for (int k = 0; k < 16; ++k) CpuRelax();
    if ((i & 15) == 15 && std::chrono::steady_clock::now() >= until) return ready();
  }
}

// Shared between the caller and helpers. Helpers hold a shared_ptr so a helper that starts
// after the caller has returned finds no task left and touches nothing freed.
struct ParallelForState {
  explicit ParallelForState(int64_t n, const std::function<void(int64_t)>* f)
      : num_tasks(n), fn(f) {}
  const int64_t num_tasks;
  const std::function<void(int64_t)>* fn;  // valid while unfinished tasks remain
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> unfinished{0};
  std::mutex mu;
  std::condition_variable done;

  // The first exception a task threw (std::bad_alloc above all), rethrown by the caller: an
  // exception leaving a helper thread would be std::terminate, i.e. SIGABRT (issue 14).
  std::exception_ptr error;

  void RunTasks() {
    for (;;) {
      const int64_t task = next.fetch_add(1, std::memory_order_relaxed);
      if (task >= num_tasks) return;
      try {
        (*fn)(task);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      if (unfinished.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu);
        done.notify_all();
      }
    }
  }
};

}  // namespace

ThreadPool::ThreadPool(int num_workers) {
  workers_.reserve(std::max(0, num_workers));
  for (int i = 0; i < num_workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    std::function<void()> job;
    // Polled without the lock first: the next section of the run usually comes soon.
    PollFor([this] { return queued_.load(std::memory_order_acquire) > 0; });
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      job = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    job();
  }
}

void ThreadPool::ParallelFor(int64_t num_tasks, int max_parallelism,
                             const std::function<void(int64_t)>& fn) {
  if (num_tasks <= 0) return;
  const int64_t helpers =
      std::min<int64_t>({static_cast<int64_t>(max_parallelism) - 1, num_tasks - 1, num_workers()});
  if (helpers <= 0) {
    for (int64_t task = 0; task < num_tasks; ++task) fn(task);
    return;
  }
  handoffs_.fetch_add(1, std::memory_order_relaxed);
  auto state = std::make_shared<ParallelForState>(num_tasks, &fn);
  state->unfinished.store(num_tasks, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t i = 0; i < helpers; ++i) queue_.emplace_back([state] { state->RunTasks(); });
    queued_.fetch_add(helpers, std::memory_order_release);
  }
  if (helpers == 1) {
    wake_.notify_one();
  } else {
    wake_.notify_all();
  }
  state->RunTasks();
  PollFor([&] { return state->unfinished.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> lock(state->mu);
  state->done.wait(lock, [&] { return state->unfinished.load(std::memory_order_acquire) == 0; });
  if (state->error) std::rethrow_exception(state->error);
}

ThreadPool& ThreadPool::Default() {
  static ThreadPool* pool = [] {
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    return new ThreadPool(std::max(1, cores - 1));
  }();
  return *pool;
}

}  // namespace onnx_bcast::runtime
