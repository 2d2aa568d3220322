// Conv as im2col + GEMM, ConvTranspose as GEMM + col2im. The column matrix of one group is
// [C/group * kernel, out] so each group is a single [M/group, C/group*kernel] x [.., out] GEMM.
// Depthwise 2-D convolutions (one input channel per group) are computed directly instead.
#include "runtime/kernels/conv.h"

#include <algorithm>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/kernels/gemm.h"

namespace onnx_bcast::rt::kernels {
namespace {

int64_t Prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// Visits every (row of the column matrix, input line) pair: for channel c and kernel offset
// kf, each run of output positions along the last dim maps to one input line. fn(col_row_ptr
// offset, input line offset or -1 when the line is in the padding, kernel offset along the
// last dim). Shared by im2col (gather) and col2im (scatter).
template <class Fn>
void ForEachColumnLine(const WindowGeometry& g, int64_t channels, Fn&& fn) {
  const int64_t rank = g.rank();
  const int64_t ksize = g.kernel_size(), osize = g.out_size();
  const int64_t out_last = g.out.back(), in_last = g.in.back();
  absl::InlinedVector<int64_t, 8> kidx(rank, 0), opos(rank, 0);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t kf = 0; kf < ksize; ++kf) {
      int64_t rem = kf;
      for (int64_t d = rank - 1; d >= 0; --d) {
        kidx[d] = rem % g.kernel[d];
        rem /= g.kernel[d];
      }
      const int64_t row = (c * ksize + kf) * osize;
      std::fill(opos.begin(), opos.end(), 0);
      for (int64_t o = 0; o < osize; o += out_last) {
        int64_t line = c;
        for (int64_t d = 0; d + 1 < rank && line >= 0; ++d) {
          const int64_t ic = opos[d] * g.strides[d] - g.pads_begin[d] + kidx[d] * g.dilations[d];
          line = (ic < 0 || ic >= g.in[d]) ? -1 : line * g.in[d] + ic;
        }
        fn(row + o, line < 0 ? -1 : line * in_last, kidx[rank - 1]);
        for (int64_t d = rank - 2; d >= 0; --d) {
          if (++opos[d] < g.out[d]) break;
          opos[d] = 0;
        }
      }
    }
  }
}

template <class T>
void Im2Col(const WindowGeometry& g, int64_t channels, const T* x, T* col) {
  const int64_t out_last = g.out.back(), in_last = g.in.back();
  const int64_t s = g.strides.back(), p = g.pads_begin.back(), dl = g.dilations.back();
  ForEachColumnLine(g, channels, [&](int64_t dst, int64_t src, int64_t k) {
    T* out = col + dst;
    if (src < 0) {
      std::fill(out, out + out_last, T(0));
      return;
    }
    // Outputs [lo, hi) read inside the line (i = o * s - p + k * dl in [0, in_last)); the
    // rest are padding. Splitting the run keeps the copy free of per-element checks.
    const int64_t first = k * dl - p;  // input index of output 0
    int64_t lo = first >= 0 ? 0 : (-first + s - 1) / s;
    int64_t hi = first >= in_last ? 0 : (in_last - 1 - first) / s + 1;
    lo = std::min(lo, out_last);
    hi = std::max(lo, std::min(hi, out_last));
    std::fill(out, out + lo, T(0));
    const T* line = x + src + first;
    if (s == 1) {
      std::copy(line + lo, line + hi, out + lo);
    } else {
      for (int64_t o = lo; o < hi; ++o) out[o] = line[o * s];
    }
    std::fill(out + hi, out + out_last, T(0));
  });
}

// A per-thread column buffer that only grows: Conv runs once per node per inference, and
// a fresh zero-filled vector each time cost a memset and page faults (megabytes for a
// 3x3 conv on a 64x64 map) that were a large share of the whole conv.
template <class T>
T* ColumnScratch(size_t elements) {
  thread_local std::vector<T> scratch;
  if (scratch.size() < elements) {
    scratch.clear();
    scratch.shrink_to_fit();
    scratch.resize(elements);
  }
  return scratch.data();
}

template <class T>
void Col2Im(const WindowGeometry& g, int64_t channels, const T* col, T* x) {
  const int64_t out_last = g.out.back(), in_last = g.in.back();
  const int64_t s = g.strides.back(), p = g.pads_begin.back(), dl = g.dilations.back();
  ForEachColumnLine(g, channels, [&](int64_t src, int64_t dst, int64_t k) {
    if (dst < 0) return;
    const T* in = col + src;
    T* line = x + dst;
    for (int64_t o = 0; o < out_last; ++o) {
      const int64_t i = o * s - p + k * dl;
      if (i >= 0 && i < in_last) line[i] += in[o];
    }
  });
}

// Depthwise 2-D convolution (one input channel per group) computed directly: per output row,
// each kernel tap adds w * (a run of one input line) to the row, with the padding split off as
// in Im2Col so that the stride-1 inner loop vectorizes. im2col + GEMM did a 9x copy and one
// [mg, 9] x [9, out] GEMM per channel: BLAS's call overhead for a tiny product dominated
// MobileNet's depthwise layers.
template <class T>
void DepthwiseConv2D(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t mg,
                     const T* x, const T* w, const T* bias, T* y) {
  const int64_t ih = g.in[0], iw = g.in[1], oh = g.out[0], ow = g.out[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
  const int64_t ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t maps = channels * mg;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      const T* xc = x + (n * channels + m / mg) * ih * iw;
      const T* wm = w + m * kh * kw;
      T* ym = y + (n * maps + m) * oh * ow;
      std::fill(ym, ym + oh * ow, bias != nullptr ? bias[m] : T(0));
      for (int64_t r = 0; r < oh; ++r) {
        T* yrow = ym + r * ow;
        for (int64_t a = 0; a < kh; ++a) {
          const int64_t row = r * sh - ph + a * dh;
          if (row < 0 || row >= ih) continue;
          const T* xrow = xc + row * iw;
          for (int64_t b = 0; b < kw; ++b) {
            const T wv = wm[a * kw + b];
            const int64_t first = b * dw - pw;  // input column of output column 0
            int64_t lo = first >= 0 ? 0 : (-first + sw - 1) / sw;
            int64_t hi = first >= iw ? 0 : (iw - 1 - first) / sw + 1;
            lo = std::min(lo, ow);
            hi = std::max(lo, std::min(hi, ow));
            const T* line = xrow + first;
            if (sw == 1) {
              for (int64_t o = lo; o < hi; ++o) yrow[o] += wv * line[o];
            } else {
              for (int64_t o = lo; o < hi; ++o) yrow[o] += wv * line[o * sw];
            }
          }
        }
      }
    }
  }
}

}  // namespace

int64_t WindowGeometry::in_size() const { return Prod(in); }
int64_t WindowGeometry::out_size() const { return Prod(out); }
int64_t WindowGeometry::kernel_size() const { return Prod(kernel); }

template <class T>
void Conv(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps, int64_t group,
          const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  if (g.rank() == 2 && cg == 1 && group > 1 && ksize > 1) {
    DepthwiseConv2D(g, batch, channels, mg, x, w, bias, y);
    return;
  }
  bool pointwise = ksize == 1;
  for (int64_t d = 0; d < g.rank(); ++d) {
    pointwise = pointwise && g.strides[d] == 1 && g.pads_begin[d] == 0 && g.pads_end[d] == 0;
  }
  T* col = pointwise ? nullptr : ColumnScratch<T>(static_cast<size_t>(cg * ksize * osize));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* xg = x + (n * channels + gi * cg) * isize;
      T* yg = y + (n * maps + gi * mg) * osize;
      const T* cols = xg;
      if (!pointwise) {
        Im2Col(g, cg, xg, col);
        cols = col;
      }
      Gemm(false, false, mg, osize, cg * ksize, T(1), w + gi * mg * cg * ksize, cg * ksize, cols,
           osize, T(0), yg, osize);
    }
    if (bias != nullptr) {
      for (int64_t m = 0; m < maps; ++m) {
        T* ym = y + (n * maps + m) * osize;
        for (int64_t i = 0; i < osize; ++i) ym[i] += bias[m];
      }
    }
  }
}

template <class T>
void ConvTranspose(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                   int64_t group, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  // col2im works on the "forward" view: the transposed conv's output is the forward conv's
  // input, so swap in/out in the geometry.
  const WindowGeometry fwd{g.out, g.in, g.kernel, g.strides, g.dilations, g.pads_begin, g.pads_end};
  std::vector<T> col(static_cast<size_t>(mg * ksize * isize));
  for (int64_t n = 0; n < batch; ++n) {
    T* yn = y + n * maps * osize;
    std::fill(yn, yn + maps * osize, T(0));
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* xg = x + (n * channels + gi * cg) * isize;
      // col[mg*K, in] = w_g^T [mg*K, cg] x x_g [cg, in].
      Gemm(true, false, mg * ksize, isize, cg, T(1), w + gi * cg * mg * ksize, mg * ksize, xg,
           isize, T(0), col.data(), isize);
      Col2Im(fwd, mg, col.data(), yn + gi * mg * osize);
    }
    if (bias != nullptr) {
      for (int64_t m = 0; m < maps; ++m) {
        T* ym = yn + m * osize;
        for (int64_t i = 0; i < osize; ++i) ym[i] += bias[m];
      }
    }
  }
}

template void Conv<float>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const float*,
                          const float*, const float*, float*);
template void Conv<double>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const double*,
                           const double*, const double*, double*);
template void ConvTranspose<float>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t,
                                   const float*, const float*, const float*, float*);
template void ConvTranspose<double>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t,
                                    const double*, const double*, const double*, double*);

}  // namespace onnx_bcast::rt::kernels
