// Conv as im2col + GEMM, ConvTranspose as GEMM + col2im. The column matrix of one group is
// [C/group * kernel, out] so each group is a single [M/group, C/group*kernel] x [.., out] GEMM;
// 2-D convolutions build it one band of output rows at a time. Float 2-D convolutions go to
// oneDNN when the build has it (conv_onednn.h); without it, depthwise 2-D ones (one input
// channel per group) are computed directly.
#include "runtime/kernels/conv.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/gemm.h"

namespace onnx_bcast::runtime::kernels {
namespace {

int64_t Prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t d : v) p *= d;
  return p;
}

// 1x1 kernel, stride 1, no pads: x already is the im2col matrix.
bool IsPointwise(const WindowGeometry& g) {
  bool pointwise = g.kernel_size() == 1;
  for (int64_t d = 0; d < g.rank(); ++d) {
    pointwise = pointwise && g.strides[d] == 1 && g.pads_begin[d] == 0 && g.pads_end[d] == 0;
  }
  return pointwise;
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

// The im2col rows of output rows [r0, r1) of a 2-D convolution: col is [cg * kh * kw,
// (r1 - r0) * ow], row (c, a, b) holding x[c, r * sh - ph + a * dh, o * sw - pw + b * dw].
template <class T>
void Im2ColBand2D(const WindowGeometry& g, int64_t cg, const T* x, int64_t r0, int64_t r1, T* col) {
  const int64_t ih = g.in[0], iw = g.in[1], ow = g.out[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
  const int64_t ph = g.pads_begin[0], pw = g.pads_begin[1];
  T* dst = col;
  for (int64_t c = 0; c < cg; ++c) {
    const T* xc = x + c * ih * iw;
    for (int64_t a = 0; a < kh; ++a) {
      for (int64_t b = 0; b < kw; ++b, dst += (r1 - r0) * ow) {
        // Output columns [lo, hi) read inside the input line; the rest are padding.
        const int64_t first = b * dw - pw;
        int64_t lo = first >= 0 ? 0 : (-first + sw - 1) / sw;
        int64_t hi = first >= iw ? 0 : (iw - 1 - first) / sw + 1;
        lo = std::min(lo, ow);
        hi = std::max(lo, std::min(hi, ow));
        for (int64_t r = r0; r < r1; ++r) {
          T* out = dst + (r - r0) * ow;
          const int64_t row = r * sh - ph + a * dh;
          if (row < 0 || row >= ih) {
            std::fill(out, out + ow, T(0));
            continue;
          }
          const T* line = xc + row * iw + first;
          std::fill(out, out + lo, T(0));
          if (sw == 1) {
            std::copy(line + lo, line + hi, out + lo);
          } else {
            for (int64_t o = lo; o < hi; ++o) out[o] = line[o * sw];
          }
          std::fill(out + hi, out + ow, T(0));
        }
      }
    }
  }
}

// Elements of the column band (about 128 KiB of floats): small enough to stay in L2 between
// im2col writing it and the GEMM reading it. The whole-image column matrix of a 3x3 conv on
// a 112x112 map is 3.6 MB per 8 channels, written once and read back from memory.
constexpr int64_t kBandElements = 32 * 1024;
constexpr int64_t kMinBandColumns = 256;
// Multiply-adds of a one-band convolution below which its GEMM is not split over threads (a
// hand-off costs some tens of microseconds on a busy machine).
constexpr int64_t kSliceMinMacs = int64_t{1} << 21;

// 2-D convolution in bands of output rows: per band, im2col of those rows into a scratch of
// about kBandElements, then one GEMM [mg, K] x [K, rows * ow] straight into y (the band's
// rows are contiguous in y). Pointwise convolutions (1x1, stride 1, no pads) skip im2col:
// the band of x is already the column matrix. Tasks are (image, group, band).
template <class T>
void Conv2DBands(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                 int64_t group, const T* x, const T* w, const T* bias, T* y,
                 const ParallelFor* parallel) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  const int64_t oh = g.out[0], ow = g.out[1], k = cg * ksize;
  const bool pointwise = IsPointwise(g);
  // At least kMinBandColumns output columns per band: OpenBLAS is slow on very narrow
  // products (one 7-wide row of a 512-channel 3x3 conv took 3x the whole-image product).
  const int64_t rows = std::clamp<int64_t>(
      std::max(kBandElements / std::max<int64_t>(k * ow, 1), (kMinBandColumns + ow - 1) / ow), 1,
      oh);
  const int64_t bands = (oh + rows - 1) / rows;
  // Maps [m0, m1) of group `gi` over one band: their weights times the band's column matrix
  // `col` (row stride `ldb`, `cols` columns) into yb, the band's place in the group's first
  // map, then their bias, added while the band is still in cache, not in a second pass over y.
  auto gemm_maps = [&](int64_t gi, int64_t m0, int64_t m1, const T* col, int64_t ldb, int64_t cols,
                       T* yb) {
    Gemm(false, false, m1 - m0, cols, k, T(1), w + (gi * mg + m0) * k, k, col, ldb, T(0),
         yb + m0 * osize, osize);
    if (bias != nullptr) {
      for (int64_t m = m0; m < m1; ++m) {
        T* ym = yb + m * osize;
        const T bm = bias[gi * mg + m];
        for (int64_t i = 0; i < cols; ++i) ym[i] += bm;
      }
    }
  };
  // The column matrix of output rows [r0, r1) of one image and group `xg`, and its row stride:
  // the band of x itself when pointwise, else its im2col in this thread's scratch.
  auto columns = [&](const T* xg, int64_t r0, int64_t r1) -> std::pair<const T*, int64_t> {
    if (pointwise) return {xg + r0 * ow, isize};
    const int64_t cols = (r1 - r0) * ow;
    T* col = ColumnScratch<T>(static_cast<size_t>(k * cols));
    Im2ColBand2D(g, cg, xg, r0, r1, col);
    return {col, cols};
  };
  auto task = [&](int64_t t) {
    const int64_t band = t % bands, gi = (t / bands) % group, n = t / bands / group;
    const int64_t r0 = band * rows, r1 = std::min(oh, r0 + rows), cols = (r1 - r0) * ow;
    const auto [col, ldb] = columns(x + (n * channels + gi * cg) * isize, r0, r1);
    gemm_maps(gi, 0, mg, col, ldb, cols, y + (n * maps + gi * mg) * osize + r0 * ow);
  };
  const int64_t tasks = batch * group * bands;
  if (parallel == nullptr) {
    for (int64_t t = 0; t < tasks; ++t) task(t);
    return;
  }
  // Our threads only, never OpenBLAS's as well (KeepBlasSingleThreaded): its threaded sgemm on
  // a small map (one band) took 40x its one-thread time with two threads on a busy 2-core
  // machine (a 48 -> 32 1x1 conv over 13x13: 1.5 against 0.036 ms).
  if (tasks >= 2) {
    (*parallel)(tasks, task);
    return;
  }
  // One band: its GEMM in slices of the maps instead, when there is enough work to share.
  const int64_t cols = oh * ow;
  const int64_t slices = mg >= 64 ? 4 : mg >= 16 ? 2 : 1;
  if (slices < 2 || mg * cols * k < kSliceMinMacs) {
    task(0);
    return;
  }
  const std::pair<const T*, int64_t> col = columns(x, 0, oh);  // batch 1, one group, one band
  (*parallel)(slices, [&](int64_t s) {
    gemm_maps(0, mg * s / slices, mg * (s + 1) / slices, col.first, col.second, cols, y);
  });
}

// The small-map kernel (ConvSmallMap). Output pixels are packed in panels of kLanes columns
// (zero-padded): bp[i][l] holds column l of row i of the im2col matrix, for all panels side by
// side, so one row of bp is np * kLanes values. A tile is `R` rows of W against every panel:
// R * np * kLanes accumulators that stay in registers while W's rows stream past once.
constexpr int kLanes = 8;

#if defined(__GNUC__)
#define BCAST_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BCAST_ALWAYS_INLINE inline
#endif

template <class T, int R, int NP>
BCAST_ALWAYS_INLINE void SmallMapTile(const T* w, int64_t k, const T* bp, const T* bias, T* y,
                                      int64_t ldy, int64_t cols) {
  T acc[R][NP * kLanes] = {};
  for (int64_t i = 0; i < k; ++i) {
    const T* b = bp + i * (NP * kLanes);
    for (int r = 0; r < R; ++r) {
      const T a = w[r * k + i];
      for (int l = 0; l < NP * kLanes; ++l) acc[r][l] += a * b[l];
    }
  }
  for (int r = 0; r < R; ++r) {
    const T add = bias != nullptr ? bias[r] : T(0);
    for (int64_t l = 0; l < cols; ++l) y[r * ldy + l] = acc[r][l] + add;
  }
}

// Rows [m0, m1) of y = w[m, k] x bp: tiles of R rows (fewer accumulators per row as the
// panels grow, so that a tile fits the 16 vector registers of AVX2), then single rows.
template <class T, int NP>
BCAST_ALWAYS_INLINE void SmallMapRowsNP(const T* w, int64_t k, const T* bp, const T* bias, T* y,
                                        int64_t ldy, int64_t cols, int64_t m0, int64_t m1) {
  constexpr int R = NP >= 3 ? 3 : 4;
  int64_t r = m0;
  for (; r + R <= m1; r += R) {
    SmallMapTile<T, R, NP>(w + r * k, k, bp, bias != nullptr ? bias + r : nullptr, y + r * ldy, ldy,
                           cols);
  }
  for (; r < m1; ++r) {
    SmallMapTile<T, 1, NP>(w + r * k, k, bp, bias != nullptr ? bias + r : nullptr, y + r * ldy, ldy,
                           cols);
  }
}

template <class T>
BCAST_ALWAYS_INLINE void SmallMapRowsAny(int np, const T* w, int64_t k, const T* bp, const T* bias,
                                         T* y, int64_t ldy, int64_t cols, int64_t m0, int64_t m1) {
  switch (np) {
    case 1:
      SmallMapRowsNP<T, 1>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
    case 2:
      SmallMapRowsNP<T, 2>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
    case 3:
      SmallMapRowsNP<T, 3>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
    default:
      SmallMapRowsNP<T, 4>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
  }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
// Float tiles with explicit 8-lane vectors (GCC/Clang vector extensions), so that the
// accumulators are registers whatever the vectorizer decides; compiled for AVX2 + FMA (the
// build targets baseline x86-64) and chosen at run time.
typedef float V8 __attribute__((vector_size(32)));

template <int R, int NP>
BCAST_ALWAYS_INLINE void SmallMapTileV8(const float* w, int64_t k, const float* bp,
                                        const float* bias, float* y, int64_t ldy, int64_t cols) {
  V8 acc[R][NP];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) acc[r][j] = V8{0, 0, 0, 0, 0, 0, 0, 0};
  }
  for (int64_t i = 0; i < k; ++i) {
    V8 b[NP];
#pragma GCC unroll 4
    for (int j = 0; j < NP; ++j) std::memcpy(&b[j], bp + (i * NP + j) * kLanes, sizeof(V8));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const float a = w[r * k + i];
      const V8 av = {a, a, a, a, a, a, a, a};
#pragma GCC unroll 4
      for (int j = 0; j < NP; ++j) acc[r][j] += av * b[j];
    }
  }
  for (int r = 0; r < R; ++r) {
    const float add = bias != nullptr ? bias[r] : 0.0f;
    for (int j = 0; j < NP; ++j) {
      float lanes[kLanes];
      std::memcpy(lanes, &acc[r][j], sizeof(V8));
      const int64_t n = std::min<int64_t>(kLanes, cols - j * kLanes);
      for (int64_t l = 0; l < n; ++l) y[r * ldy + j * kLanes + l] = lanes[l] + add;
    }
  }
}

template <int NP>
BCAST_ALWAYS_INLINE void SmallMapRowsV8(const float* w, int64_t k, const float* bp,
                                        const float* bias, float* y, int64_t ldy, int64_t cols,
                                        int64_t m0, int64_t m1) {
  constexpr int R = NP >= 3 ? 3 : 4;
  int64_t r = m0;
  for (; r + R <= m1; r += R) {
    SmallMapTileV8<R, NP>(w + r * k, k, bp, bias != nullptr ? bias + r : nullptr, y + r * ldy, ldy,
                          cols);
  }
  for (; r < m1; ++r) {
    SmallMapTileV8<1, NP>(w + r * k, k, bp, bias != nullptr ? bias + r : nullptr, y + r * ldy, ldy,
                          cols);
  }
}

__attribute__((target("avx2,fma"))) void SmallMapRowsAvx2(int np, const float* w, int64_t k,
                                                          const float* bp, const float* bias,
                                                          float* y, int64_t ldy, int64_t cols,
                                                          int64_t m0, int64_t m1) {
  switch (np) {
    case 1:
      SmallMapRowsV8<1>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
    case 2:
      SmallMapRowsV8<2>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
    case 3:
      SmallMapRowsV8<3>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
    default:
      SmallMapRowsV8<4>(w, k, bp, bias, y, ldy, cols, m0, m1);
      break;
  }
}
bool HaveAvx2() {
  static const bool have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return have;
}
#endif

template <class T>
void SmallMapRows(int np, const T* w, int64_t k, const T* bp, const T* bias, T* y, int64_t ldy,
                  int64_t cols, int64_t m0, int64_t m1) {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  if constexpr (std::is_same_v<T, float>) {
    if (HaveAvx2()) {
      SmallMapRowsAvx2(np, w, k, bp, bias, y, ldy, cols, m0, m1);
      return;
    }
  }
#endif
  SmallMapRowsAny<T>(np, w, k, bp, bias, y, ldy, cols, m0, m1);
}

}  // namespace

int64_t WindowGeometry::in_size() const { return Prod(in); }
int64_t WindowGeometry::out_size() const { return Prod(out); }
int64_t WindowGeometry::kernel_size() const { return Prod(kernel); }

template <class T>
void Conv(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps, int64_t group,
          const T* x, const T* w, const T* bias, T* y, int threads, const ParallelFor* parallel) {
  const bool pointwise = IsPointwise(g);
  if constexpr (std::is_same_v<T, float>) {
    // Pointwise convolutions stay on OpenBLAS: x is already the GEMM's right-hand side, while
    // oneDNN reorders x and y to and from its blocked layout (1.2-1.3x slower, bench_conv).
    // So do convolutions with more weights than outputs (deep layers on small maps): oneDNN
    // reorders the weights on every call, which cost more than it saved on 512x512x3x3
    // over 7x7 (7.3 ms against 5.5 ms).
    const int64_t weights = maps * (channels / group) * g.kernel_size();
    // Maps of one panel read the weights once in place (ConvSmallMap); oneDNN and OpenBLAS
    // would both copy all of them first (1.3x faster than OpenBLAS on 512 maps over 2x3).
    if (g.rank() == 2 && !(channels == group && group > 1) && g.out_size() <= 8) {
      ConvSmallMap<T>(g, batch, channels, maps, group, x, w, bias, y, parallel);
      return;
    }
    const int64_t outputs = batch * maps * g.out_size();
    // Depthwise ones go too: 3-10x faster than the direct loop below (bench_conv).
    if (g.rank() == 2 && !pointwise && weights <= outputs &&
        OneDnnConv2D(g, batch, channels, maps, group, x, w, bias, y, threads)) {
      return;
    }
  }
  ConvNoOneDnn(g, batch, channels, maps, group, x, w, bias, y, parallel);
}

template <class T>
void ConvNoOneDnn(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                  int64_t group, const T* x, const T* w, const T* bias, T* y,
                  const ParallelFor* parallel) {
  if (g.rank() == 2 && channels == group && group > 1 && g.kernel_size() > 1) {
    DepthwiseConv2D(g, batch, channels, maps / group, x, w, bias, y);
    return;
  }
  if (g.rank() == 2) {
    Conv2DBands(g, batch, channels, maps, group, x, w, bias, y, parallel);
    return;
  }
  ConvIm2colWhole(g, batch, channels, maps, group, x, w, bias, y);
}

template <class T>
void ConvSmallMap(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                  int64_t group, const T* x, const T* w, const T* bias, T* y,
                  const ParallelFor* parallel) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  const int64_t k = cg * ksize;
  const int np = static_cast<int>((osize + kLanes - 1) / kLanes);
  const bool pointwise = IsPointwise(g);
  // Scratch: the im2col matrix [k, osize] (not for pointwise: x is it) and its panels.
  const int64_t width = static_cast<int64_t>(np) * kLanes;
  T* scratch = ColumnScratch<T>(static_cast<size_t>(k * (width + (pointwise ? 0 : osize))));
  T* bp = scratch;
  T* col = scratch + k * width;
  // Tasks of 16 rows: enough work per task to be worth a hand-off.
  constexpr int64_t kTaskRows = 16;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t gi = 0; gi < group; ++gi) {
      const T* xg = x + (n * channels + gi * cg) * isize;
      const T* src = xg;
      if (!pointwise) {
        Im2ColBand2D(g, cg, xg, 0, g.out[0], col);
        src = col;
      }
      for (int64_t i = 0; i < k; ++i) {
        T* row = bp + i * width;
        std::copy(src + i * osize, src + (i + 1) * osize, row);
        std::fill(row + osize, row + width, T(0));
      }
      const T* wg = w + gi * mg * k;
      const T* bg = bias != nullptr ? bias + gi * mg : nullptr;
      T* yg = y + (n * maps + gi * mg) * osize;
      const int64_t tasks = (mg + kTaskRows - 1) / kTaskRows;
      auto task = [&](int64_t t) {
        SmallMapRows<T>(np, wg, k, bp, bg, yg, osize, osize, t * kTaskRows,
                        std::min(mg, (t + 1) * kTaskRows));
      };
      if (parallel == nullptr || tasks < 2) {
        SmallMapRows<T>(np, wg, k, bp, bg, yg, osize, osize, 0, mg);
      } else {
        (*parallel)(tasks, task);
      }
    }
  }
}

namespace {
// Where the rule sends pointwise convolutions to oneDNN, and small maps to ConvSmallMap (see
// PrepareConv2D).
constexpr int64_t kPointwiseOneDnnMaxPixels = 64;
constexpr int64_t kSmallMapRulePixels = 8;
}  // namespace

const char* ConvPathName(ConvPath path) {
  switch (path) {
    case ConvPath::kOneDnn:
      return "onednn";
    case ConvPath::kSmallMap:
      return "small-map";
    case ConvPath::kBands:
      return "im2col-blas";
  }
  return "?";
}

ConvChoice DefaultConvChoice() {
  static const ConvChoice choice = [] {
    const char* env = std::getenv("BCAST_CONV_TUNE");
    return env != nullptr && std::strcmp(env, "1") == 0 ? ConvChoice::kMeasure : ConvChoice::kRule;
  }();
  return choice;
}

namespace {

// The geometry a prepared convolution was built for.
struct ConvShape {
  WindowGeometry g;
  int64_t batch, channels, maps, group;
};

// A path that reads the weights in place (small-map, bands): nothing prepared but the shape.
class InPlacePrepared : public PreparedConv {
 public:
  using Kernel = void (*)(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const float*,
                          const float*, const float*, float*, const ParallelFor*);
  InPlacePrepared(ConvShape s, ConvPath path, Kernel kernel)
      : s_(std::move(s)), path_(path), kernel_(kernel) {}
  bool Run(const float* x, const float* w, const float* bias, float* y,
           const ParallelFor* parallel) override {
    kernel_(s_.g, s_.batch, s_.channels, s_.maps, s_.group, x, w, bias, y, parallel);
    return true;
  }
  int64_t bytes() const override { return 0; }
  ConvPath path() const override { return path_; }

 private:
  ConvShape s_;
  ConvPath path_;
  Kernel kernel_;
};

std::unique_ptr<PreparedConv> MakePrepared(ConvPath path, const ConvShape& s, const float* w,
                                           bool has_bias, int threads) {
  switch (path) {
    case ConvPath::kOneDnn:
      return PrepareOneDnnConv2D(s.g, s.batch, s.channels, s.maps, s.group, w, has_bias, threads);
    case ConvPath::kSmallMap:
      if (s.g.out_size() > kSmallMapMaxPixels) return nullptr;
      return std::make_unique<InPlacePrepared>(s, path, &ConvSmallMap<float>);
    case ConvPath::kBands:
      return std::make_unique<InPlacePrepared>(s, path, &ConvNoOneDnn<float>);
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<PreparedConv> PrepareConv2D(const WindowGeometry& g, int64_t batch,
                                            int64_t channels, int64_t maps, int64_t group,
                                            const float* w, bool has_bias, ConvChoice choice,
                                            const ConvPath* forced, int threads) {
  if (g.rank() != 2) return nullptr;
  const ConvShape s{g, batch, channels, maps, group};
  if (forced != nullptr) return MakePrepared(*forced, s, w, has_bias, threads);
  const int64_t ksize = g.kernel_size();
  const bool pointwise = IsPointwise(g);
  const bool depthwise = channels == group && group > 1 && ksize > 1;
  if (choice == ConvChoice::kMeasure) {
    // Each candidate runs twice on zeros (the first warms caches and oneDNN's JIT code); the
    // second run's time decides.
    std::vector<float> x(static_cast<size_t>(batch * channels * g.in_size()), 0.0f);
    std::vector<float> y(static_cast<size_t>(batch * maps * g.out_size()));
    std::vector<float> b(static_cast<size_t>(maps), 0.0f);
    std::unique_ptr<PreparedConv> best;
    double best_seconds = 0;
    for (ConvPath path : {ConvPath::kOneDnn, ConvPath::kSmallMap, ConvPath::kBands}) {
      std::unique_ptr<PreparedConv> p = MakePrepared(path, s, w, has_bias, threads);
      if (p == nullptr) continue;
      double seconds = 0;
      bool ok = true;
      for (int rep = 0; rep < 2 && ok; ++rep) {
        const auto start = std::chrono::steady_clock::now();
        ok = p->Run(x.data(), w, has_bias ? b.data() : nullptr, y.data(), nullptr);
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
      if (ok && (best == nullptr || seconds < best_seconds)) {
        best = std::move(p);
        best_seconds = seconds;
      }
    }
    return best;
  }
  // The rule (bench_conv on 2026-11-28, docs/performance.md): with the weights reordered once,
  // oneDNN was the fastest path on every non-pointwise geometry measured (2-3x the others on
  // 256 maps over 4x5, even with 512 maps over 2x3) and on pointwise ones over small maps
  // (512 maps over 2x3: 4x OpenBLAS); larger pointwise ones stay on OpenBLAS, where x is
  // already the GEMM's right-hand side and oneDNN would reorder x and y on every call.
  // Without oneDNN, maps of one panel stream the weights once (small-map: 1.3x OpenBLAS on
  // 512 maps over 2x3); OpenBLAS's AVX-512 kernels won on wider ones.
  if (!pointwise || g.out_size() <= kPointwiseOneDnnMaxPixels) {
    if (std::unique_ptr<PreparedConv> p =
            MakePrepared(ConvPath::kOneDnn, s, w, has_bias, threads)) {
      return p;
    }
  }
  if (!depthwise && g.out_size() <= kSmallMapRulePixels) {
    return MakePrepared(ConvPath::kSmallMap, s, w, has_bias, threads);
  }
  return MakePrepared(ConvPath::kBands, s, w, has_bias, threads);
}

template <class T>
void ConvIm2colWhole(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                     int64_t group, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = channels / group, mg = maps / group;
  const int64_t ksize = g.kernel_size(), isize = g.in_size(), osize = g.out_size();
  const bool pointwise = IsPointwise(g);
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

// Every entry point of conv.h for float and double.
#define BCAST_CONV_INSTANTIATE(T)                                                             \
  template void Conv<T>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const T*,  \
                        const T*, const T*, T*, int, const ParallelFor*);                     \
  template void ConvNoOneDnn<T>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t,    \
                                const T*, const T*, const T*, T*, const ParallelFor*);        \
  template void ConvSmallMap<T>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t,    \
                                const T*, const T*, const T*, T*, const ParallelFor*);        \
  template void ConvIm2colWhole<T>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t, \
                                   const T*, const T*, const T*, T*);                         \
  template void ConvTranspose<T>(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t,   \
                                 const T*, const T*, const T*, T*);
BCAST_CONV_INSTANTIATE(float)
BCAST_CONV_INSTANTIATE(double)
#undef BCAST_CONV_INSTANTIATE

}  // namespace onnx_bcast::runtime::kernels
