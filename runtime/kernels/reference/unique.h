// Reference Unique: no sort; each slice is compared element by element with the unique slices
// found before it, and when sorted each unique slice's place is the number of unique slices
// below it. Quadratic; the oracle for kernels/unique.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNIQUE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNIQUE_H_

#include <cstdint>
#include <vector>

#include "runtime/kernels/element_values.h"
#include "runtime/kernels/unique.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::UniqueSlices.
template <class T>
UniqueGroups UniqueSlices(const T* x, int64_t outer, int64_t dim, int64_t inner, bool sorted) {
  auto at = [&](int64_t s, int64_t o, int64_t n) { return x[(o * dim + s) * inner + n]; };
  // -1, 0 or 1: slice a against slice b, the first differing element deciding.
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t n = 0; n < inner; ++n) {
        if (LessValues(at(a, o, n), at(b, o, n))) return -1;
        if (LessValues(at(b, o, n), at(a, o, n))) return 1;
      }
    }
    return 0;
  };
  // Unique slices by first occurrence.
  std::vector<int64_t> firsts, group_of;
  for (int64_t s = 0; s < dim; ++s) {
    int64_t group = -1;
    for (size_t u = 0; u < firsts.size() && group < 0; ++u) {
      if (compare(firsts[u], s) == 0) group = static_cast<int64_t>(u);
    }
    if (group < 0) {
      group = static_cast<int64_t>(firsts.size());
      firsts.push_back(s);
    }
    group_of.push_back(group);
  }
  std::vector<int64_t> place(firsts.size());
  for (size_t u = 0; u < firsts.size(); ++u) {
    place[u] = static_cast<int64_t>(u);
    if (!sorted) continue;
    place[u] = 0;
    for (size_t v = 0; v < firsts.size(); ++v) place[u] += compare(firsts[v], firsts[u]) < 0;
  }
  UniqueGroups g;
  g.first.resize(firsts.size());
  g.counts.assign(firsts.size(), 0);
  for (size_t u = 0; u < firsts.size(); ++u) g.first[place[u]] = firsts[u];
  for (int64_t s = 0; s < dim; ++s) {
    g.inverse.push_back(place[group_of[s]]);
    ++g.counts[g.inverse.back()];
  }
  return g;
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_UNIQUE_H_
