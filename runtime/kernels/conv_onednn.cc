// oneDNN convolution adapter: one primitive per (thread, geometry), built on first use and
// kept (creating one costs far more than running it); per call, the user's NCHW input and
// OIHW weights are reordered into the primitive's layouts and the output back to NCHW.
#include "runtime/kernels/conv_onednn.h"

#include <cstdlib>
#include <cstring>

#ifdef BCAST_HAVE_ONEDNN
#include <omp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/kernels/channel_blocks.h"
#include "runtime/kernels/onednn_cache.h"
#endif

namespace onnx_bcast::runtime::kernels {

#ifndef BCAST_HAVE_ONEDNN

bool OneDnnConvAvailable() { return false; }
bool OneDnnConv2D(const WindowGeometry&, int64_t, int64_t, int64_t, int64_t, const float*,
                  const float*, const float*, float*, int) {
  return false;
}
std::unique_ptr<PreparedConv> PrepareOneDnnConv2D(const WindowGeometry&, int64_t, int64_t, int64_t,
                                                  int64_t, const float*, bool, int) {
  return nullptr;
}

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr memory::data_type kF32 = memory::data_type::f32;

// Everything the primitive depends on.
// Threads are part of it: oneDNN splits the work for omp_get_max_threads() when it builds
// the primitive, and runs that many threads whatever the count at execution.
using Key = std::tuple<std::vector<int64_t>, int64_t, int64_t, int64_t, int64_t, bool, int>;

Key MakeKey(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps, int64_t group,
            bool bias, int threads) {
  std::vector<int64_t> geo;
  for (const std::vector<int64_t>* v :
       {&g.in, &g.out, &g.kernel, &g.strides, &g.dilations, &g.pads_begin, &g.pads_end}) {
    geo.insert(geo.end(), v->begin(), v->end());
  }
  return {geo, batch, channels, maps, group, bias, threads};
}

// A primitive with its user-layout memories (handles set per call) and, where oneDNN chose
// another layout, the internal memories and reorders between them.
struct Entry {
  dnnl::convolution_forward conv;
  memory user_src, user_wei, user_dst, bias;
  memory src, wei, dst;
  dnnl::reorder to_src, to_wei, from_dst;
  bool reorder_src = false, reorder_wei = false, reorder_dst = false;
  std::string impl;  ///< oneDNN's name of the implementation it chose
};

using ThreadState = OneDnnThreadState<Key, Entry>;

// The descriptor of a forward-inference direct convolution over `g`'s strides and dilations
// (oneDNN counts dilation from 0: ONNX's dilation - 1), with a bias when `bias` is given.
dnnl::convolution_forward::desc ConvDesc(const WindowGeometry& g, const memory::desc& src,
                                         const memory::desc& wei, const memory::desc* bias,
                                         const memory::desc& dst, const memory::dims& pad_l,
                                         const memory::dims& pad_r) {
  const memory::dims strides{g.strides[0], g.strides[1]};
  const memory::dims dilations{g.dilations[0] - 1, g.dilations[1] - 1};
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto algo = dnnl::algorithm::convolution_direct;
  if (bias != nullptr) {
    return dnnl::convolution_forward::desc(prop, algo, src, wei, *bias, dst, strides, dilations,
                                           pad_l, pad_r);
  }
  return dnnl::convolution_forward::desc(prop, algo, src, wei, dst, strides, dilations, pad_l,
                                         pad_r);
}

// `plain_src`: the primitive reads x in NCHW itself (no source reorder); otherwise oneDNN
// picks the source layout.
std::unique_ptr<Entry> Build(const dnnl::engine& engine, const WindowGeometry& g, int64_t batch,
                             int64_t channels, int64_t maps, int64_t group, bool has_bias,
                             bool plain_src) {
  const int64_t cg = channels / group, mg = maps / group;
  const memory::dims src_dims{batch, channels, g.in[0], g.in[1]};
  const memory::dims dst_dims{batch, maps, g.out[0], g.out[1]};
  const memory::dims wei_dims = group == 1 ? memory::dims{maps, cg, g.kernel[0], g.kernel[1]}
                                           : memory::dims{group, mg, cg, g.kernel[0], g.kernel[1]};
  const memory::desc src_any(src_dims, kF32, plain_src ? Tag::nchw : Tag::any);
  const memory::desc dst_any(dst_dims, kF32, Tag::any);
  const memory::desc wei_any(wei_dims, kF32, Tag::any);
  const memory::desc bias_desc({maps}, kF32, Tag::x);
  const auto desc = ConvDesc(g, src_any, wei_any, has_bias ? &bias_desc : nullptr, dst_any,
                             {g.pads_begin[0], g.pads_begin[1]}, {g.pads_end[0], g.pads_end[1]});
  const dnnl::convolution_forward::primitive_desc pd(desc, engine);
  auto e = std::make_unique<Entry>();
  e->conv = dnnl::convolution_forward(pd);
  e->user_src = memory({src_dims, kF32, Tag::nchw}, engine, nullptr);
  e->user_dst = memory({dst_dims, kF32, Tag::nchw}, engine, nullptr);
  e->user_wei = memory({wei_dims, kF32, group == 1 ? Tag::oihw : Tag::goihw}, engine, nullptr);
  if (has_bias) e->bias = memory(bias_desc, engine, nullptr);
  e->impl = pd.impl_info_str();
  e->reorder_src = pd.src_desc() != e->user_src.get_desc();
  e->reorder_wei = pd.weights_desc() != e->user_wei.get_desc();
  e->reorder_dst = pd.dst_desc() != e->user_dst.get_desc();
  if (e->reorder_src) {
    e->src = memory(pd.src_desc(), engine);
    e->to_src = dnnl::reorder(e->user_src, e->src);
  }
  if (e->reorder_wei) {
    e->wei = memory(pd.weights_desc(), engine);
    e->to_wei = dnnl::reorder(e->user_wei, e->wei);
  }
  if (e->reorder_dst) {
    e->dst = memory(pd.dst_desc(), engine);
    e->from_dst = dnnl::reorder(e->dst, e->user_dst);
  }
  return e;
}

// Build with oneDNN's choice of source layout, then, where that choice needs a source reorder,
// with the plain NCHW source if oneDNN has a direct (not im2col + GEMM) kernel reading it. It
// has one for few input channels (stems: 1-8 channels on every geometry tried), and there it
// skips the reorder and was faster every time (bench_conv on 2026-11-28: 3->48 3x3 stride 2 on
// 224x224 0.56 against 0.77 ms with the reorder, 3->16 0.15 against 0.26 ms). For more channels
// oneDNN only reads NCHW through its GEMM path, 2-3x slower than a reorder and its direct kernel.
std::unique_ptr<Entry> BuildBest(const dnnl::engine& engine, const WindowGeometry& g, int64_t batch,
                                 int64_t channels, int64_t maps, int64_t group, bool has_bias) {
  std::unique_ptr<Entry> e = Build(engine, g, batch, channels, maps, group, has_bias, false);
  if (!e->reorder_src) return e;
  try {
    std::unique_ptr<Entry> plain = Build(engine, g, batch, channels, maps, group, has_bias, true);
    if (plain->impl.find("gemm") == std::string::npos) return plain;
  } catch (const dnnl::error&) {
    // No implementation reads NCHW here: keep the reordering primitive.
  }
  return e;
}

}  // namespace

bool OneDnnConvAvailable() {
  static const bool available = [] {
    const char* env = std::getenv("BCAST_CONV_ONEDNN");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return available;
}

bool OneDnnConv2D(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
                  int64_t group, const float* x, const float* w, const float* bias, float* y,
                  int threads) {
  if (!OneDnnConvAvailable() || g.rank() != 2) return false;
  thread_local ThreadState ts;
  // One OpenMP thread, whatever the run's count: libgomp's idle team spins (its wait policy
  // is only read from the environment at load), and on a 2-core machine shared with our own
  // pool and OpenBLAS that spinning made 2-thread runs 10-100x slower (fpn: 25 ms against
  // 2.1 ms with OMP_WAIT_POLICY=passive). Splitting a convolution over our pool is left.
  threads = 1;
  // oneDNN's OpenMP regions use this thread's ICV, read when a primitive is built.
  omp_set_num_threads(threads);
  const Key key = MakeKey(g, batch, channels, maps, group, bias != nullptr, threads);
  Entry* found = ts.Find(
      key, [&] { return BuildBest(ts.engine, g, batch, channels, maps, group, bias != nullptr); });
  if (found == nullptr) return false;
  Entry& e = *found;
  try {
    e.user_src.set_data_handle(const_cast<float*>(x));
    e.user_wei.set_data_handle(const_cast<float*>(w));
    e.user_dst.set_data_handle(y);
    if (e.reorder_src) e.to_src.execute(ts.stream, e.user_src, e.src);
    if (e.reorder_wei) e.to_wei.execute(ts.stream, e.user_wei, e.wei);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, e.reorder_src ? e.src : e.user_src},
                                            {DNNL_ARG_WEIGHTS, e.reorder_wei ? e.wei : e.user_wei},
                                            {DNNL_ARG_DST, e.reorder_dst ? e.dst : e.user_dst}};
    if (bias != nullptr) {
      e.bias.set_data_handle(const_cast<float*>(bias));
      args.emplace(DNNL_ARG_BIAS, e.bias);
    }
    e.conv.execute(ts.stream, args);
    if (e.reorder_dst) e.from_dst.execute(ts.stream, e.dst, e.user_dst);
    ts.stream.wait();
  } catch (const dnnl::error&) {
    return false;
  }
  return true;
}

namespace {

// Multiply-adds below which a part of a split convolution (Split) is not worth its own
// primitive call and hand-off: about 30 us of oneDNN's work on one AVX-512 core (0.03 ns a
// multiply-add), against a few microseconds of overhead per part.
constexpr int64_t kSplitMinMacsPerPart = int64_t{1} << 20;

// BCAST_CONV_SPLIT=0 in the environment: no split (Split), for measuring against it.
bool SplitAllowed() {
  static const bool allowed = [] {
    const char* env = std::getenv("BCAST_CONV_SPLIT");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return allowed;
}

// The engine prepared convolutions are built on (one per process: an engine may be shared by
// threads) and each thread's stream on it.
const dnnl::engine& SharedEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

class OneDnnPreparedConv : public PreparedConv {
 public:
  explicit OneDnnPreparedConv(std::unique_ptr<Entry> e) : e_(std::move(e)) {}

  // Reorders `w` into the primitive's layout once; the user-layout weights are not kept.
  void PackWeights(const float* w, dnnl::stream& stream) {
    if (!e_->reorder_wei) {
      // The primitive takes OIHW itself: keep a copy, so Run never depends on `w`'s layout
      // being the one it was prepared with (it is; this is one memcpy at plan time).
      e_->wei = memory(e_->user_wei.get_desc(), SharedEngine());
      std::memcpy(e_->wei.get_data_handle(), w, e_->user_wei.get_desc().get_size());
      e_->reorder_wei = true;  // Run reads e_->wei
      return;
    }
    e_->user_wei.set_data_handle(const_cast<float*>(w));
    e_->to_wei.execute(stream, e_->user_wei, e_->wei);
    stream.wait();
  }

  bool Run(const float* x, const float* w, const float* bias, float* y,
           const ParallelFor* parallel) override {
    return RunBlocked(x, 0, w, bias, y, 0, parallel);
  }

  // Splits the convolution into `parts` primitives run as tasks of the caller's ParallelFor:
  // oneDNN's own threading is OpenMP, kept at one thread (OneDnnConv2D says why), so without
  // this a 2-thread run computed every convolution on one core. Only for batch 1 and one group,
  // and only where a part's input and output are contiguous slices: with an NHWC source and
  // destination (oneDNN's choice for few channels on AVX-512) a band of output rows, otherwise
  // (NCHW, nChw16c, nChw8c destinations) a slice of the maps. Each part has its own primitive,
  // its own scratchpad (parts run at the same time) and, for slices of the maps, its weights
  // reordered once. Left unsplit when oneDNN would compute a part with another implementation
  // than the whole (a slower one, or none).
  void Split(int threads, const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps,
             int64_t group, const float* w, bool has_bias) {
    if (threads < 2 || batch != 1 || group != 1 || !SplitAllowed()) return;
    const int64_t oh = g.out[0], ow = g.out[1], ksize = g.kernel_size();
    // Up to two parts a thread, each of at least kSplitMinMacsPerPart: threads take parts
    // from a shared counter, so a thread the busy machine deschedules holds back a quarter of
    // the convolution, not half (four a thread cost more in per-part calls than they saved).
    const int64_t max_parts =
        std::min<int64_t>(2 * threads, maps * oh * ow * channels * ksize / kSplitMinMacsPerPart);
    if (max_parts < threads) return;
    const memory::dims full_src{batch, channels, g.in[0], g.in[1]};
    const memory::dims full_dst{batch, maps, oh, ow};
    const bool nhwc = e_->reorder_src && e_->reorder_dst &&
                      e_->src.get_desc() == memory::desc(full_src, kF32, Tag::nhwc) &&
                      e_->dst.get_desc() == memory::desc(full_dst, kF32, Tag::nhwc);
    // Slices of the maps where they are whole blocks of the destination (as many as fit);
    // otherwise bands of rows.
    Tag dst_tag = Tag::nchw;
    bool rows = true;
    int64_t parts = std::min(max_parts, oh);
    for (int64_t p = max_parts; p >= threads && rows && !nhwc; --p) {
      if (maps % p != 0) continue;
      const int64_t mp = maps / p;
      if (!e_->reorder_dst) {
        rows = false;
      } else if (mp % 16 == 0 && e_->dst.get_desc() == memory::desc(full_dst, kF32, Tag::nChw16c)) {
        dst_tag = Tag::nChw16c;
        rows = false;
      } else if (mp % 8 == 0 && e_->dst.get_desc() == memory::desc(full_dst, kF32, Tag::nChw8c)) {
        dst_tag = Tag::nChw8c;
        rows = false;
      }
      if (!rows) parts = p;
    }
    if (parts < threads) return;
    // A band of rows of any other layout is a strided view, which oneDNN computes with its
    // reference kernel; for an NCHW source (stems: oneDNN reads it directly) each band is
    // copied into a buffer of its own instead, and written to one of its own unless it is one
    // contiguous piece of the destination (a single channel block).
    const bool copy_src = rows && !nhwc && !e_->reorder_src;
    if (rows && !nhwc && !copy_src) return;
    Tag whole_tag = Tag::undef;
    int64_t single_block = 0;
    if (copy_src) {
      for (Tag tag : {Tag::nchw, Tag::nChw16c, Tag::nChw8c, Tag::nhwc}) {
        if (whole_tag == Tag::undef && whole_dst_desc() == memory::desc(full_dst, kF32, tag)) {
          whole_tag = tag;
        }
      }
      if (whole_tag == Tag::undef) return;
      if (whole_tag == Tag::nChw16c && maps <= 16) single_block = 16;
      if (whole_tag == Tag::nChw8c && maps <= 8) single_block = 8;
    }
    const memory::desc whole_src = e_->reorder_src ? e_->src.get_desc() : e_->user_src.get_desc();
    const memory::desc whole_dst = whole_dst_desc();
    const dnnl::engine& engine = SharedEngine();
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    const int64_t reach = (g.kernel[0] - 1) * g.dilations[0] + 1;  // input rows of one output row
    // The parts of `count`, kept if oneDNN computes each with the whole's implementation.
    const auto try_parts = [&](int64_t count) {
      std::vector<Part> built;
      try {
        dnnl::stream& stream = Stream();
        for (int i = 0; i < count; ++i) {
          Part part;
          // This part's output rows [r0, r1) and maps [m0, m1), and the input rows it reads.
          int64_t r0 = 0, r1 = oh, m0 = 0, m1 = maps, in0 = 0, in1 = g.in[0];
          int64_t pad_t = g.pads_begin[0], pad_b = g.pads_end[0];
          if (rows) {
            r0 = oh * i / count;
            r1 = oh * (i + 1) / count;
            const int64_t first = r0 * g.strides[0] - g.pads_begin[0];  // may be in the padding
            const int64_t end = (r1 - 1) * g.strides[0] - g.pads_begin[0] + reach;
            in0 = std::max<int64_t>(0, first);
            in1 = std::min<int64_t>(g.in[0], end);
            pad_t = in0 - first;
            pad_b = end - in1;
            if (in1 <= in0) return false;  // a band wholly in the padding: not worth the care
            if (nhwc) {
              part.src_offset = in0 * g.in[1] * channels;
              part.dst_offset = r0 * ow * maps;
            }
            part.in0 = in0;
            part.in_rows = in1 - in0;
          } else {
            m0 = maps * i / count;
            m1 = maps * (i + 1) / count;
            part.dst_offset = m0 * oh * ow;
          }
          part.m0 = m0;
          const memory::dims part_src{batch, channels, in1 - in0, g.in[1]};
          const memory::dims part_dst{batch, m1 - m0, r1 - r0, ow};
          memory::desc src_desc = whole_src, dst_desc(part_dst, kF32, dst_tag);
          if (nhwc) {
            src_desc = memory::desc(part_src, kF32, Tag::nhwc);
            dst_desc = memory::desc(part_dst, kF32, Tag::nhwc);
          } else if (copy_src) {
            src_desc = memory::desc(part_src, kF32, Tag::nchw);
            dst_desc = memory::desc(part_dst, kF32, whole_tag);
            part.copy_src = true;
            if (single_block != 0) {
              part.dst_offset = r0 * ow * single_block;
            } else {
              part.own_dst = true;
            }
          }
          const memory::dims wei_dims{m1 - m0, channels, g.kernel[0], g.kernel[1]};
          const memory::desc bias_desc({m1 - m0}, kF32, Tag::x);
          const memory::desc wei_desc =
              rows ? e_->wei.get_desc() : memory::desc(wei_dims, kF32, Tag::any);
          const memory::dims pad_l{pad_t, g.pads_begin[1]}, pad_r{pad_b, g.pads_end[1]};
          const auto desc = ConvDesc(g, src_desc, wei_desc, has_bias ? &bias_desc : nullptr,
                                     dst_desc, pad_l, pad_r);
          const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine);
          if (pd.impl_info_str() != e_->impl) return false;
          part.conv = dnnl::convolution_forward(pd);
          part.src = part.copy_src ? memory(src_desc, engine) : memory(src_desc, engine, nullptr);
          part.dst = part.own_dst ? memory(dst_desc, engine) : memory(dst_desc, engine, nullptr);
          if (part.own_dst && out_block_ != 0) {
            // Blocked output asked for: this band goes to its rows of the whole.
            part.whole_view =
                memory(whole_dst.submemory_desc(part_dst, {0, 0, r0, 0}), engine, nullptr);
            part.to_whole = dnnl::reorder(part.dst, part.whole_view);
          }
          if (has_bias) part.bias = memory(bias_desc, engine, nullptr);
          part.scratch = memory(pd.scratchpad_desc(), engine);
          if (rows) {
            if (pd.weights_desc() != e_->wei.get_desc()) return false;
            part.wei = e_->wei;  // every band reads all the weights: the whole's, shared
          } else {
            part.wei = memory(pd.weights_desc(), engine);
            part.own_weights = true;
            memory from(memory::desc(wei_dims, kF32, Tag::oihw), engine,
                        const_cast<float*>(w + m0 * channels * ksize));
            dnnl::reorder(from, part.wei).execute(stream, from, part.wei);
          }
          if (e_->reorder_dst || part.own_dst) {
            // This part's slice of the NCHW output (rows of every map: strided).
            const memory::dims nchw_strides{maps * oh * ow, oh * ow, ow, 1};
            part.user_dst = memory(memory::desc(part_dst, kF32, nchw_strides), engine, nullptr);
            part.user_offset = m0 * oh * ow + r0 * ow;
            part.from_dst = dnnl::reorder(part.dst, part.user_dst);
          }
          // Memories are handles: the map sees the data handles set per run.
          part.args = {{DNNL_ARG_SRC, part.src},
                       {DNNL_ARG_WEIGHTS, part.wei},
                       {DNNL_ARG_DST, part.dst},
                       {DNNL_ARG_SCRATCHPAD, part.scratch}};
          if (has_bias) part.args.emplace(DNNL_ARG_BIAS, part.bias);
          built.push_back(std::move(part));
        }
        stream.wait();
      } catch (const dnnl::error&) {
        return false;  // no split: the whole primitive runs
      }
      parts_ = std::move(built);
      split_rows_ = rows;
      return true;
    };
    // Bands of rows: fewer and taller ones where oneDNN would compute a short band with
    // another kernel (96 maps of 14 rows: in four bands "ref:any", in two the whole's
    // "brgconv").
    for (int64_t count = parts; count >= (rows ? threads : parts); --count) {
      if (try_parts(count)) return;
    }
  }

  memory::desc whole_dst_desc() const {
    return e_->reorder_dst ? e_->dst.get_desc() : e_->user_dst.get_desc();
  }

  // Runs the parts on `parallel`: `src` is the primitive's source, ready; `y` the
  // destination in block `y_block` (0: NCHW).
  void RunParts(const memory& src, const float* bias, float* y, int y_block,
                const ParallelFor& parallel) {
    Entry& e = *e_;
    float* blocked = e.reorder_dst ? static_cast<float*>(e.dst.get_data_handle()) : nullptr;
    auto* source = static_cast<float*>(src.get_data_handle());
    parallel(static_cast<int64_t>(parts_.size()), [&](int64_t t) {
      omp_set_num_threads(1);  // this thread's OpenMP team too: none
      Part& part = parts_[static_cast<size_t>(t)];
      dnnl::stream& stream = Stream();
      if (part.copy_src) {
        auto* band = static_cast<float*>(part.src.get_data_handle());
        const int64_t h = src_dims_[2], w = src_dims_[3], plane = part.in_rows * w;
        for (int64_t c = 0; c < channels_; ++c) {
          std::memcpy(band + c * plane, source + (c * h + part.in0) * w,
                      static_cast<size_t>(plane) * sizeof(float));
        }
      } else {
        part.src.set_data_handle(source + part.src_offset);
      }
      // Written straight into y when y is in the primitive's own layout (NCHW, or the block
      // asked for); otherwise into the blocked buffer (or the part's own), then this part's
      // slice reordered.
      const bool direct = !part.own_dst && (!e.reorder_dst || y_block != 0);
      if (!part.own_dst) part.dst.set_data_handle((direct ? y : blocked) + part.dst_offset);
      if (bias != nullptr) part.bias.set_data_handle(const_cast<float*>(bias + part.m0));
      part.conv.execute(stream, part.args);
      if (part.own_dst && y_block != 0) {
        part.whole_view.set_data_handle(y);
        part.to_whole.execute(stream, part.dst, part.whole_view);
      } else if (!direct) {
        part.user_dst.set_data_handle(y + part.user_offset);
        part.from_dst.execute(stream, part.dst, part.user_dst);
      }
      stream.wait();
    });
  }

  // The blocked layouts this primitive reads and writes directly (kernels/channel_blocks.h):
  // found once, after the primitive is built.
  void FindBlocks(const WindowGeometry& g, int64_t batch, int64_t channels, int64_t maps) {
    channels_ = channels;
    const memory::dims dims{batch, maps, g.out[0], g.out[1]};
    for (auto [b, tag] :
         {std::pair<int64_t, Tag>{maps, Tag::nhwc}, {16, Tag::nChw16c}, {8, Tag::nChw8c}}) {
      if (out_block_ == 0 && e_->reorder_dst && maps % b == 0 &&
          e_->dst.get_desc() == memory::desc(dims, kF32, tag)) {
        out_block_ = static_cast<int>(b);
      }
    }
    src_dims_ = {batch, channels, g.in[0], g.in[1]};
  }

  int out_block() const override { return out_block_; }
  // A primitive that reorders its source anyway reorders from a blocked one as well; one that
  // reads NCHW itself (stems) takes NCHW only.
  bool takes_block(int block) const override {
    return block == 0 || (e_->reorder_src && ChannelBlocksFit(channels_, block));
  }

  bool RunBlocked(const float* x, int x_block, const float*, const float* bias, float* y,
                  int y_block, const ParallelFor* parallel) override {
    if (!takes_block(x_block) || (y_block != 0 && y_block != out_block_)) return false;
    omp_set_num_threads(1);
    try {
      dnnl::stream& stream = Stream();
      Entry& e = *e_;
      memory src = e.reorder_src ? e.src : e.user_src;
      if (x_block == 0) {
        e.user_src.set_data_handle(const_cast<float*>(x));
        if (e.reorder_src) e.to_src.execute(stream, e.user_src, e.src);
      } else {
        BlockedSource& bs = Source(x_block);
        bs.user.set_data_handle(const_cast<float*>(x));
        if (bs.direct) {
          src = bs.user;  // already the primitive's layout
        } else {
          bs.to_src.execute(stream, bs.user, e.src);
        }
      }
      if (!parts_.empty() && parallel != nullptr) {
        stream.wait();  // the source is ready before any part reads it
        RunParts(src, bias, y, y_block, *parallel);
        return true;
      }
      memory dst = e.reorder_dst ? e.dst : e.user_dst;
      if (y_block != 0) {
        if (!blocked_dst_) blocked_dst_ = memory(e.dst.get_desc(), SharedEngine(), nullptr);
        blocked_dst_.set_data_handle(y);
        dst = blocked_dst_;
      } else {
        e.user_dst.set_data_handle(y);
      }
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, e.wei}, {DNNL_ARG_DST, dst}};
      if (bias != nullptr) {
        e.bias.set_data_handle(const_cast<float*>(bias));
        args.emplace(DNNL_ARG_BIAS, e.bias);
      }
      e.conv.execute(stream, args);
      if (y_block == 0 && e.reorder_dst) e.from_dst.execute(stream, e.dst, e.user_dst);
      stream.wait();
    } catch (const dnnl::error&) {
      return false;
    }
    return true;
  }

  int64_t bytes() const override {
    int64_t total = static_cast<int64_t>(e_->wei.get_desc().get_size());
    if (e_->reorder_src) total += static_cast<int64_t>(e_->src.get_desc().get_size());
    if (e_->reorder_dst) total += static_cast<int64_t>(e_->dst.get_desc().get_size());
    for (const Part& part : parts_) {
      total += static_cast<int64_t>(part.scratch.get_desc().get_size());
      if (part.own_weights) total += static_cast<int64_t>(part.wei.get_desc().get_size());
      if (part.copy_src) total += static_cast<int64_t>(part.src.get_desc().get_size());
      if (part.own_dst) total += static_cast<int64_t>(part.dst.get_desc().get_size());
    }
    return total;
  }
  ConvPath path() const override { return ConvPath::kOneDnn; }
  const char* label() const override {
    if (!parts_.empty()) {
      if (split_rows_) return e_->reorder_src ? "onednn-split-rows" : "onednn-nchw-split-rows";
      return e_->reorder_src ? "onednn-split-maps" : "onednn-nchw-split-maps";
    }
    return e_->reorder_src ? "onednn" : "onednn-nchw";
  }

  static dnnl::stream& Stream() {
    thread_local dnnl::stream stream(SharedEngine());
    return stream;
  }

 private:
  // A block of all the channels is NHWC (for 8 or 16 channels the same bytes as nChw8c or
  // nChw16c, which oneDNN does not see: asking for NHWC then lets a primitive that reads NHWC
  // take the buffer without a reorder).
  static Tag BlockTag(int block, int64_t channels) {
    return block == channels ? Tag::nhwc : block == 16 ? Tag::nChw16c : Tag::nChw8c;
  }

  // A blocked source: its memory (handle set per run) and, unless the primitive reads that
  // very layout, the reorder into the primitive's source layout. Built at first use.
  struct BlockedSource {
    memory user;
    dnnl::reorder to_src;
    bool direct = false;
  };
  BlockedSource& Source(int block) {
    BlockedSource& bs = block == channels_ ? src_all_ : block == 16 ? src16_ : src8_;
    if (!bs.user) {
      const memory::desc desc(src_dims_, kF32, BlockTag(block, channels_));
      // 8 or 16 channels in one block: NHWC and nChw8c/nChw16c are the same bytes.
      const bool same_bytes =
          block == channels_ && (block == 8 || block == 16) &&
          memory::desc(src_dims_, kF32, block == 16 ? Tag::nChw16c : Tag::nChw8c) ==
              e_->src.get_desc();
      bs.direct = same_bytes || desc == e_->src.get_desc();
      bs.user = memory(bs.direct ? e_->src.get_desc() : desc, SharedEngine(), nullptr);
      if (!bs.direct) bs.to_src = dnnl::reorder(bs.user, e_->src);
    }
    return bs;
  }

  // One part of a split convolution (Split): a band of output rows or a slice of the maps
  // as its own primitive. Offsets are in floats from the start of each buffer.
  struct Part {
    int64_t m0 = 0;  ///< first map (bias offset)
    int64_t src_offset = 0, dst_offset = 0, user_offset = 0;
    int64_t in0 = 0, in_rows = 0;  ///< the input rows a band reads
    bool own_weights = false;      ///< false: the whole's weights, shared
    bool copy_src = false;         ///< src is the part's own buffer, its rows copied in per run
    bool own_dst = false;          ///< dst is the part's own buffer, reordered out per run
    memory whole_view;             ///< own_dst: its rows of the whole blocked output
    dnnl::reorder to_whole;
    std::unordered_map<int, memory> args;  ///< the primitive's arguments, built once
    dnnl::convolution_forward conv;
    memory src, wei, dst, bias, scratch, user_dst;
    dnnl::reorder from_dst;
  };
  std::unique_ptr<Entry> e_;
  std::vector<Part> parts_;
  bool split_rows_ = false;  ///< parts are bands of rows (else slices of the maps)
  int out_block_ = 0;
  int64_t channels_ = 0;
  memory::dims src_dims_;
  BlockedSource src8_, src16_, src_all_;
  memory blocked_dst_;
};

}  // namespace

std::unique_ptr<PreparedConv> PrepareOneDnnConv2D(const WindowGeometry& g, int64_t batch,
                                                  int64_t channels, int64_t maps, int64_t group,
                                                  const float* w, bool has_bias, int threads) {
  if (!OneDnnConvAvailable() || g.rank() != 2) return nullptr;
  omp_set_num_threads(1);  // read when the primitive is built
  try {
    auto prepared = std::make_unique<OneDnnPreparedConv>(
        BuildBest(SharedEngine(), g, batch, channels, maps, group, has_bias));
    prepared->PackWeights(w, OneDnnPreparedConv::Stream());
    prepared->FindBlocks(g, batch, channels, maps);
    prepared->Split(threads, g, batch, channels, maps, group, w, has_bias);
    return prepared;
  } catch (const dnnl::error&) {
    return nullptr;
  }
}

#endif  // BCAST_HAVE_ONEDNN

}  // namespace onnx_bcast::runtime::kernels
