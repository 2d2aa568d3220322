// Unique's grouping of the slices of a dense [outer, dim, inner] view along its middle axis:
// slices copied to contiguous rows, a stable sort of their indices by lexicographic row order
// (LessValues: NaN above every number and equal to NaN), then one pass over the sorted run to
// form groups. Oracle: reference/unique.h.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_UNIQUE_H_
#define ONNX_BCAST_RUNTIME_KERNELS_UNIQUE_H_

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "runtime/kernels/element_values.h"

namespace onnx_bcast::runtime::kernels {

/// The unique slices, in output order: ascending when sorted, else by first occurrence.
struct UniqueGroups {
  /// The axis position of each unique slice's first occurrence.
  std::vector<int64_t> first;
  /// For each slice on the axis, its unique slice's output position.
  std::vector<int64_t> inverse;
  /// How many slices each unique slice stands for.
  std::vector<int64_t> counts;
};

/// -1, 0 or 1 as row a is lexicographically below, equal to or above row b (`len` elements).
template <class T>
int CompareRows(const T* a, const T* b, int64_t len) {
  for (int64_t k = 0; k < len; ++k) {
    if (LessValues(a[k], b[k])) return -1;
    if (LessValues(b[k], a[k])) return 1;
  }
  return 0;
}

/// Slice s is the elements x[o, s, n] for every o and n, compared in that (row-major) order.
template <class T>
UniqueGroups UniqueSlices(const T* x, int64_t outer, int64_t dim, int64_t inner, bool sorted) {
  const int64_t len = outer * inner;
  // Row s holds slice s contiguously: x itself when outer is 1, else a copy (bool as bytes).
  using Stored = std::conditional_t<std::is_same_v<T, bool>, unsigned char, T>;
  std::vector<Stored> copy;
  const Stored* rows = nullptr;
  if constexpr (std::is_same_v<Stored, T>) {
    if (outer == 1) rows = x;
  }
  if (rows == nullptr && len > 0) {
    copy.resize(static_cast<size_t>(dim * len));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t s = 0; s < dim; ++s) {
        const T* in = x + (o * dim + s) * inner;
        std::copy(in, in + inner, copy.begin() + s * len + o * inner);
      }
    }
    rows = copy.data();
  }
  auto row = [&](int64_t s) { return rows + s * len; };
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return CompareRows(row(a), row(b), len) < 0; });
  // Groups of equal slices in ascending order, each led by its first occurrence (stable sort).
  std::vector<int64_t> group_of(static_cast<size_t>(dim));
  std::vector<int64_t> leaders;
  for (int64_t i = 0; i < dim; ++i) {
    if (i == 0 || CompareRows(row(order[i - 1]), row(order[i]), len) != 0) {
      leaders.push_back(order[i]);
    }
    group_of[order[i]] = static_cast<int64_t>(leaders.size()) - 1;
  }
  // Output position of each group: its ascending rank, or the order of first occurrences.
  std::vector<int64_t> place(leaders.size());
  if (sorted) {
    std::iota(place.begin(), place.end(), 0);
  } else {
    int64_t next = 0;
    for (int64_t i = 0; i < dim; ++i) {
      if (leaders[group_of[i]] == i) place[group_of[i]] = next++;
    }
  }
  UniqueGroups g;
  g.first.resize(leaders.size());
  g.counts.assign(leaders.size(), 0);
  g.inverse.resize(static_cast<size_t>(dim));
  for (size_t k = 0; k < leaders.size(); ++k) g.first[place[k]] = leaders[k];
  for (int64_t i = 0; i < dim; ++i) {
    g.inverse[i] = place[group_of[i]];
    ++g.counts[g.inverse[i]];
  }
  return g;
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_UNIQUE_H_
