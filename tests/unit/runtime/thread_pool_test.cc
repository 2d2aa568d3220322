// ThreadPool: every task runs exactly once, from several callers, nested, and with no workers.
#include "runtime/thread_pool.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace onnx_bcast::rt {
namespace {

TEST(ThreadPoolTest, RunsEveryTaskOnce) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(1000);
  pool.ParallelFor(1000, 3, [&](int64_t i) { hits[i].fetch_add(1); });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
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
}  // namespace onnx_bcast::rt
