// The default memory budget of a run: a quarter of physical memory, read at run time.
#include "runtime/memory_budget.h"

#include <unistd.h>

namespace onnx_bcast::runtime {

int64_t DefaultMaxMemoryBytes() {
  static const int64_t bytes = [] {
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page_size = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;
    return static_cast<int64_t>(pages) / 4 * static_cast<int64_t>(page_size);
  }();
  return bytes;
}

}  // namespace onnx_bcast::runtime
