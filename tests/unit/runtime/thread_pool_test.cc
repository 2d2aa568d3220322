// ThreadPool: every task runs exactly once, from several callers, nested, and with no workers.
#include "runtime/thread_pool.h"

#include <atomic>
#include <chrono>
#include <new>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace onnx_bcast::runtime {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskOnce) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, 3, [&](int64_t i) { hits[i].fetch_add(1); });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
}

// An allocation that fails inside a task on a helper thread reaches the caller as the
// exception (the CLI turns it into exit 2), never std::terminate; the other tasks still run.
TEST(ThreadPoolTest, ExceptionOnAHelperReachesTheCaller) {
  ThreadPool pool(3);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> ran{0}, thrown{0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  EXPECT_THROW(pool.ParallelFor(64, 4,
                                [&](int64_t) {
                                  ran.fetch_add(1);
                                  if (std::this_thread::get_id() != caller) {
                                    thrown.fetch_add(1);
                                    throw std::bad_alloc();
                                  }
                                  // Leave tasks to the helpers until one has thrown.
                                  while (thrown.load() == 0 &&
                                         std::chrono::steady_clock::now() < deadline) {
                                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                                  }
                                }),
               std::bad_alloc);
  EXPECT_EQ(ran.load(), 64);
  EXPECT_GT(thrown.load(), 0);
  // The pool stays usable.
  std::atomic<int> again{0};
  pool.ParallelFor(10, 4, [&](int64_t) { again.fetch_add(1); });
  EXPECT_EQ(again.load(), 10);
}

TEST(ThreadPoolTest, NoWorkersRunsOnCaller) {
  ThreadPool pool(0);
  const std::thread::id caller = std::this_thread::get_id();
  int count = 0;
  pool.ParallelFor(5, 4, [&](int64_t) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ++count;
  });
  EXPECT_EQ(count, 5);
}

TEST(ThreadPoolTest, ConcurrentAndNestedCallers) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int rep = 0; rep < 50; ++rep) {
        pool.ParallelFor(4, 2, [&](int64_t) {
          pool.ParallelFor(3, 2, [&](int64_t j) { total.fetch_add(j + 1); });
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(total.load(), 3 * 50 * 4 * 6);
}

}  // namespace
}  // namespace onnx_bcast::runtime
