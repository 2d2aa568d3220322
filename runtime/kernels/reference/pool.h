// Reference pooling: every output element visits every kernel tap and checks bounds itself (no
// precomputed tap ranges). The oracle for runtime/kernels/pool.h in tests.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_POOL_H_
#define ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_POOL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/kernels/pool.h"
#include "runtime/kernels/reference/conv.h"

namespace onnx_bcast::runtime::kernels::reference {

/// Same contract as kernels::Pool.
template <class T>
void Pool(const PoolOptions& opt, const WindowGeometry& g, int64_t planes, const T* x, T* y,
          int64_t* indices) {
  const int64_t rank = g.rank(), isize = g.in_size(), osize = g.out_size();
  std::vector<int64_t> oc, kc, ic(rank);
  for (int64_t plane = 0; plane < planes; ++plane) {
    for (int64_t o = 0; o < osize; ++o) {
      Unravel(o, g.out, &oc);
      double sum = 0, best = 0;
      int64_t best_at = -1, count = 0, padded = 0;
      for (int64_t kf = 0; kf < g.kernel_size(); ++kf) {
        Unravel(kf, g.kernel, &kc);
        bool inside = true, in_padded = true;
        for (int64_t d = 0; d < rank; ++d) {
          ic[d] = oc[d] * g.strides[d] - g.pads_begin[d] + kc[d] * g.dilations[d];
          inside = inside && ic[d] >= 0 && ic[d] < g.in[d];
          in_padded = in_padded && ic[d] < g.in[d] + g.pads_end[d];
        }
        padded += in_padded;
        if (!inside) continue;
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) off = off * g.in[d] + ic[d];
        const double v = static_cast<double>(x[plane * isize + off]);
        ++count;
        if (opt.kind == PoolKind::kMax) {
          if (best_at < 0 || v > best) {
            best = v;
            best_at = off;
          }
        } else if (opt.kind == PoolKind::kAverage) {
          sum += v;
        } else {
          sum += std::pow(std::fabs(v), opt.p);
        }
      }
      double result = best_at < 0 ? 0.0 : best;
      if (opt.kind == PoolKind::kAverage) {
        const int64_t div = opt.count_include_pad ? padded : count;
        result = div > 0 ? sum / static_cast<double>(div) : 0.0;
      } else if (opt.kind == PoolKind::kLp) {
        result = std::pow(sum, 1.0 / opt.p);
      }
      y[plane * osize + o] = static_cast<T>(result);
      if (indices != nullptr) {
        int64_t idx = best_at < 0 ? 0 : best_at;
        if (opt.column_major_indices) {
          std::vector<int64_t> c;
          Unravel(idx, g.in, &c);
          idx = 0;
          for (int64_t d = rank - 1; d >= 0; --d) idx = idx * g.in[d] + c[d];
        }
        indices[plane * osize + o] = opt.index_base + plane * isize + idx;
      }
    }
  }
}

/// Same contract as kernels::MaxUnpool (the loop MaxUnpoolOp held): every index unravelled
/// over the pooled shape, every output zeroed element by element first.
inline void MaxUnpool(const void* x, const int64_t* indices, int64_t count,
                      const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                      int64_t planes, size_t elem_size, void* y) {
  int64_t in_plane = 1, out_plane = 1;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    in_plane *= in_dims[d];
    out_plane *= out_dims[d];
  }
  for (int64_t e = 0; e < planes * out_plane; ++e) {
    std::memset(static_cast<char*>(y) + e * elem_size, 0, elem_size);
  }
  const size_t rank = in_dims.size();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t plane = indices[i] / in_plane;
    int64_t rem = indices[i] % in_plane, off = 0, stride = 1;
    bool inside = true;
    for (size_t d = rank; d-- > 0;) {
      const int64_t coord = rem % in_dims[d];
      rem /= in_dims[d];
      inside = inside && coord < out_dims[d];
      off += coord * stride;
      stride *= out_dims[d];
    }
    if (!inside) continue;
    std::memcpy(static_cast<char*>(y) + (plane * out_plane + off) * elem_size,
                static_cast<const char*>(x) + i * elem_size, elem_size);
  }
}

}  // namespace onnx_bcast::runtime::kernels::reference

#endif  // ONNX_BCAST_RUNTIME_KERNELS_REFERENCE_POOL_H_
