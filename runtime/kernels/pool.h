// Pooling kernels over N-D spatial dims: max (with flat indices), average (with or without
// padding in the divisor) and Lp, per (batch, channel) plane, window clipped to the input.
#ifndef ONNX_BCAST_RUNTIME_KERNELS_POOL_H_
#define ONNX_BCAST_RUNTIME_KERNELS_POOL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/kernels/conv.h"
#include "runtime/kernels/pool_simd.h"

namespace onnx_bcast::runtime::kernels {

/// The pooling operators.
enum class PoolKind { kMax, kAverage, kLp };

/// Options of Pool.
struct PoolOptions {
  PoolKind kind = PoolKind::kMax;
  /// AveragePool: divide by the window size inside the padded input (true) or by the number
  /// of real input elements (false).
  bool count_include_pad = false;
  /// LpPool's p.
  double p = 2;
  /// MaxPool indices in column-major spatial order (storage_order 1).
  bool column_major_indices = false;
  /// Added to every MaxPool index: the flat offset of the first plane when the planes of a
  /// tensor are pooled in chunks.
  int64_t index_base = 0;
};

/// Per dim of a window geometry and output position along it: the first and last+1 kernel
/// offsets whose taps lie inside the input (begin == end: none), and how many lie inside the
/// padded input (AveragePool's divisor with count_include_pad).
struct WindowTaps {
  std::vector<std::vector<int64_t>> begin, end, padded;
};

inline WindowTaps TapsOf(const WindowGeometry& g) {
  const int64_t rank = g.rank();
  WindowTaps t;
  t.begin.resize(rank);
  t.end.resize(rank);
  t.padded.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    for (int64_t o = 0; o < g.out[d]; ++o) {
      // Taps k with 0 <= start + k * dilation < in are a contiguous range; computed in
      // closed form so that huge kernels cost nothing per output.
      const int64_t start = o * g.strides[d] - g.pads_begin[d], dl = g.dilations[d];
      const int64_t kb = start >= 0 ? 0 : (-start + dl - 1) / dl;
      const int64_t last = g.in[d] - 1 - start;  // largest k * dl still inside
      const int64_t ke = last < 0 ? kb : std::min(g.kernel[d], last / dl + 1);
      const int64_t padded_last = g.in[d] + g.pads_end[d] - 1 - start;
      const int64_t pc = padded_last < 0 ? 0 : std::min(g.kernel[d], padded_last / dl + 1);
      t.begin[d].push_back(kb);
      t.end[d].push_back(ke > kb ? ke : kb);
      t.padded[d].push_back(pc);
    }
  }
  return t;
}

/// One output row's run [0, len) of MaxPool2D outputs whose windows lie wholly inside the
/// input: each tap, in the scalar loop's order, is folded into all of them at once
/// (acc = v > acc ? v : acc, element by element), so every output keeps the scalar loop's bits
/// and the loop vectorizes. The scalar loop is one dependent max per tap per output, bound by
/// its latency (1.2 ms for a 3x3/2 pool of 32 x 111 x 111, three quarters of ORT's whole
/// SqueezeNet). `kStride` is the stride along W when it is 1 or 2 (then a constant the
/// compiler sees), 0 for `sw`. `row0` points at the first window's top-left tap.
template <int kStride, class T>
void MaxPoolRowRun(const T* row0, int64_t len, int64_t sw, int64_t in_w, int64_t kh_taps,
                   int64_t dh, int64_t kw_taps, int64_t dw, T* y) {
  const int64_t s = kStride != 0 ? kStride : sw;
  constexpr int64_t kChunk = 64;
  T acc[kChunk];
  for (int64_t o0 = 0; o0 < len; o0 += kChunk) {
    const int64_t n = std::min(kChunk, len - o0);
    const T* base = row0 + o0 * s;
    for (int64_t i = 0; i < n; ++i) acc[i] = base[i * s];
    for (int64_t kh = 0; kh < kh_taps; ++kh) {
      const T* row = base + kh * dh * in_w;
      for (int64_t kw = kh == 0 ? 1 : 0; kw < kw_taps; ++kw) {
        const T* src = row + kw * dw;
        for (int64_t i = 0; i < n; ++i) {
          const T v = src[i * s];
          acc[i] = v > acc[i] ? v : acc[i];
        }
      }
    }
    std::copy(acc, acc + n, y + o0);
  }
}

/// MaxPool over 2 spatial dims without indices, the common CNN case, with the general
/// loop's exact semantics (the first tap starts the maximum, so a NaN there stays; a later
/// NaN never wins; an empty window gives 0) but no per-tap odometer or double accumulator.
/// k_begin/k_end: the valid kernel offsets per dim and output position. Outputs whose window
/// is whole along W go through MaxPoolRowRun (for float with strides 1 and 2, its AVX-512 or
/// AVX2 form, pool_simd.h); the others (borders) through the scalar loop.
template <class T>
void MaxPool2D(const WindowGeometry& g, int64_t planes, const T* x, T* y,
               const std::vector<std::vector<int64_t>>& k_begin,
               const std::vector<std::vector<int64_t>>& k_end) {
  const int64_t in_h = g.in[0], in_w = g.in[1], out_h = g.out[0], out_w = g.out[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t dh = g.dilations[0], dw = g.dilations[1];
  // [run_lo, run_hi): the outputs along W whose window has every tap (a contiguous range).
  int64_t run_lo = out_w, run_hi = out_w;
  for (int64_t ow = 0; ow < out_w; ++ow) {
    if (k_begin[1][ow] == 0 && k_end[1][ow] == g.kernel[1]) {
      if (run_lo == out_w) run_lo = ow;
      run_hi = ow + 1;
    }
  }
  const auto scalar = [&](const T* xp, T* yrow, int64_t h0, int64_t khb, int64_t khe, int64_t ow) {
    const int64_t w0 = ow * sw - pw, kwb = k_begin[1][ow], kwe = k_end[1][ow];
    if (khb >= khe || kwb >= kwe) {
      yrow[ow] = T(0);
      return;
    }
    T acc = xp[(h0 + khb * dh) * in_w + w0 + kwb * dw];
    for (int64_t kh = khb; kh < khe; ++kh) {
      const T* row = xp + (h0 + kh * dh) * in_w + w0;
      for (int64_t kw = kh == khb ? kwb + 1 : kwb; kw < kwe; ++kw) {
        const T v = row[kw * dw];
        acc = v > acc ? v : acc;
      }
    }
    yrow[ow] = acc;
  };
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xp = x + plane * in_h * in_w;
    T* yp = y + plane * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const int64_t h0 = oh * sh - ph, khb = k_begin[0][oh], khe = k_end[0][oh];
      T* yrow = yp + oh * out_w;
      if (khb >= khe || run_lo >= run_hi) {
        for (int64_t ow = 0; ow < out_w; ++ow) scalar(xp, yrow, h0, khb, khe, ow);
        continue;
      }
      for (int64_t ow = 0; ow < run_lo; ++ow) scalar(xp, yrow, h0, khb, khe, ow);
      const T* row0 = xp + (h0 + khb * dh) * in_w + run_lo * sw - pw;
      const int64_t len = run_hi - run_lo, kh_taps = khe - khb, kw_taps = g.kernel[1];
      // Float rows at strides 1 and 2 on AVX-512 or AVX2 (pool_simd.h), with the same bits.
      bool vector_row = false;
      if constexpr (std::is_same_v<T, float>) {
        vector_row =
            MaxPoolRowRunVector({row0, len, sw, in_w, kh_taps, dh, kw_taps, dw}, yrow + run_lo);
      }
      if (!vector_row) {
        if (sw == 1) {
          MaxPoolRowRun<1>(row0, len, sw, in_w, kh_taps, dh, kw_taps, dw, yrow + run_lo);
        } else if (sw == 2) {
          MaxPoolRowRun<2>(row0, len, sw, in_w, kh_taps, dh, kw_taps, dw, yrow + run_lo);
        } else {
          MaxPoolRowRun<0>(row0, len, sw, in_w, kh_taps, dh, kw_taps, dw, yrow + run_lo);
        }
      }
      for (int64_t ow = run_hi; ow < out_w; ++ow) scalar(xp, yrow, h0, khb, khe, ow);
    }
  }
}

/// Pools `planes` planes of x [planes, in...] into y [planes, out...]. `indices` (may be null)
/// gets MaxPool's flat input index (index_base + plane * in_size + spatial offset).
template <class T>
void Pool(const PoolOptions& opt, const WindowGeometry& g, int64_t planes, const T* x, T* y,
          int64_t* indices) {
  const int64_t rank = g.rank(), isize = g.in_size(), osize = g.out_size();
  const WindowTaps taps = TapsOf(g);
  const std::vector<std::vector<int64_t>>& k_begin = taps.begin;
  const std::vector<std::vector<int64_t>>& k_end = taps.end;
  const std::vector<std::vector<int64_t>>& padded = taps.padded;
  // Integers too: their maxima are exact, and there is no NaN to order.
  if constexpr (std::is_arithmetic_v<T>) {
    if (opt.kind == PoolKind::kMax && indices == nullptr && rank == 2) {
      MaxPool2D(g, planes, x, y, k_begin, k_end);
      return;
    }
  }
  // Global average pooling (one window over the whole unpadded plane): the loop below's sum
  // in its order, so the same bits, without its per-tap odometer, which cost 8 ns an element
  // (the squeeze-excite blocks of MobileNetV3 pool ten times per run).
  bool whole_plane = opt.kind == PoolKind::kAverage && osize == 1 && isize > 0;
  for (int64_t d = 0; d < rank && whole_plane; ++d) {
    whole_plane = g.kernel[d] == g.in[d] && g.pads_begin[d] == 0 && g.pads_end[d] == 0;
  }
  if (whole_plane && indices == nullptr) {
    // Eight planes at a time, each summed in its own order: one plane's sum is a chain of
    // dependent double adds (4 cycles each, 0.6 ms for 48 planes of 112x112); eight chains
    // overlap in the pipeline and keep every plane's bits.
    constexpr int64_t kLanes = 8;
    int64_t plane = 0;
    for (; plane + kLanes <= planes; plane += kLanes) {
      const T* xp = x + plane * isize;
      double acc[kLanes] = {};
      for (int64_t i = 0; i < isize; ++i) {
        for (int64_t l = 0; l < kLanes; ++l) acc[l] += static_cast<double>(xp[l * isize + i]);
      }
      for (int64_t l = 0; l < kLanes; ++l) {
        y[plane + l] = static_cast<T>(acc[l] / static_cast<double>(isize));
      }
    }
    for (; plane < planes; ++plane) {
      const T* xp = x + plane * isize;
      double acc = 0.0;
      for (int64_t i = 0; i < isize; ++i) acc += static_cast<double>(xp[i]);
      y[plane] = static_cast<T>(acc / static_cast<double>(isize));
    }
    return;
  }
  std::vector<int64_t> opos(rank, 0), k(rank, 0);
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xp = x + plane * isize;
    std::fill(opos.begin(), opos.end(), 0);
    for (int64_t o = 0; o < osize; ++o) {
      double acc = opt.kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      int64_t best = -1, count = 0, window = 1;
      bool empty = false;
      for (int64_t d = 0; d < rank; ++d) {
        k[d] = k_begin[d][opos[d]];
        empty = empty || k[d] >= k_end[d][opos[d]];
        window *= padded[d][opos[d]];
      }
      while (!empty) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) {
          off = off * g.in[d] + opos[d] * g.strides[d] - g.pads_begin[d] + k[d] * g.dilations[d];
        }
        const double v = static_cast<double>(xp[off]);
        switch (opt.kind) {
          case PoolKind::kMax:
            if (v > acc || best < 0) {
              acc = v;
              best = off;
            }
            break;
          case PoolKind::kAverage:
            acc += v;
            break;
          case PoolKind::kLp:
            acc += std::pow(std::fabs(v), opt.p);
            break;
        }
        ++count;
        int64_t d = rank - 1;
        for (; d >= 0; --d) {
          if (++k[d] < k_end[d][opos[d]]) break;
          k[d] = k_begin[d][opos[d]];
        }
        if (d < 0) break;
      }
      double result = acc;
      if (opt.kind == PoolKind::kAverage) {
        const int64_t div = opt.count_include_pad ? window : count;
        result = div > 0 ? acc / static_cast<double>(div) : 0.0;
      } else if (opt.kind == PoolKind::kLp) {
        result = std::pow(acc, 1.0 / opt.p);
      } else if (best < 0) {
        result = 0;
      }
      y[plane * osize + o] = static_cast<T>(result);
      if (indices != nullptr) {
        int64_t idx = std::max<int64_t>(best, 0);
        if (opt.column_major_indices) {
          // Re-linearize the spatial offset with the first dim fastest.
          int64_t rem = idx, col = 0, stride = 1;
          std::vector<int64_t> coord(rank);
          for (int64_t d = rank - 1; d >= 0; --d) {
            coord[d] = rem % g.in[d];
            rem /= g.in[d];
          }
          for (int64_t d = 0; d < rank; ++d) {
            col += coord[d] * stride;
            stride *= g.in[d];
          }
          idx = col;
        }
        indices[plane * osize + o] = opt.index_base + plane * isize + idx;
      }
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++opos[d] < g.out[d]) break;
        opos[d] = 0;
      }
    }
  }
}

/// MaxUnpool: y [planes, out_dims...] is zero bits except where an element of x lands; element
/// i of x goes to the position `indices[i]` names in [planes, in_dims...] (the shape the pooling
/// came from), re-placed in out_dims, or nowhere when a coordinate is outside them. Indices
/// must be in [0, planes * prod(in_dims)); later elements overwrite earlier ones.
inline void MaxUnpool(const void* x, const int64_t* indices, int64_t count,
                      const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                      int64_t planes, size_t elem_size, void* y) {
  int64_t in_plane = 1, out_plane = 1;
  for (size_t d = 0; d < in_dims.size(); ++d) {
    in_plane *= in_dims[d];
    out_plane *= out_dims[d];
  }
  if (planes * out_plane == 0) return;  // an empty output's buffer may be null
  auto* out = static_cast<std::byte*>(y);
  const auto* in = static_cast<const std::byte*>(x);
  std::memset(out, 0, static_cast<size_t>(planes * out_plane) * elem_size);
  if (in_dims == out_dims) {  // the attributes' own shape: the index is the offset
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(out + indices[i] * elem_size, in + i * elem_size, elem_size);
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t rem = indices[i] % in_plane, off = 0, stride = 1;
    bool inside = true;
    for (size_t d = in_dims.size(); d-- > 0 && inside;) {
      const int64_t coord = rem % in_dims[d];
      rem /= in_dims[d];
      inside = coord < out_dims[d];
      off += coord * stride;
      stride *= out_dims[d];
    }
    if (!inside) continue;
    std::memcpy(out + ((indices[i] / in_plane) * out_plane + off) * elem_size, in + i * elem_size,
                elem_size);
  }
}

}  // namespace onnx_bcast::runtime::kernels

#endif  // ONNX_BCAST_RUNTIME_KERNELS_POOL_H_
