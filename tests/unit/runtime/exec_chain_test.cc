// Elementwise chains (kernels/elementwise_chain.h, found and run by the executor): the tiled
// kernel against its whole-array reference on seeded random chains, and models run fused and
// one node at a time, which must give the same bits; chains whose operands do not qualify at a
// run fall back to the nodes one by one.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/onnx_text.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/kernels/elementwise_chain.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/exec_harness.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using testing::ExpectSameBits;

using kernels::ChainStep;

// A random chain of 1-16 steps over x and up to three scalars; every operand reads x, an
// earlier step or a scalar (never two scalars).
std::vector<ChainStep> RandomChain(std::mt19937_64& rng, int scalars) {
  const int steps = static_cast<int>(rng() % kernels::kMaxChainSteps) + 1;
  std::vector<ChainStep> chain;
  for (int i = 0; i < steps; ++i) {
    ChainStep st;
    st.op = static_cast<ChainStep::Op>(rng() % 6);
    st.alpha = static_cast<float>(rng() % 5) * 0.1f + 0.1f;  // HardSigmoid's
    st.beta = static_cast<float>(rng() % 3) * 0.25f + 0.25f;
    auto reg = [&] { return ChainStep::Operand{false, static_cast<int>(rng() % (i + 1))}; };
    st.a = reg();
    st.b = reg();
    if (st.op != ChainStep::Op::kErf && st.op != ChainStep::Op::kHardSigmoid && rng() % 2 == 0) {
      ChainStep::Operand s{true, static_cast<int>(rng() % scalars)};
      (rng() % 2 == 0 ? st.a : st.b) = s;
    }
    chain.push_back(st);
  }
  return chain;
}

TEST(ElementwiseChain, KernelMatchesReferenceOnRandomChains) {
  std::mt19937_64 rng(20261128);
  ThreadPool pool(2);
  const kernels::ParallelFor parallel = testing::PoolParallel(&pool);
  std::uniform_real_distribution<float> dist(-3, 3);
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<float> scalars = {dist(rng), 1.0f, 0.5f};
    const std::vector<ChainStep> chain = RandomChain(rng, 3);
    // Sizes around the tile (512) and the task (32768), zero, and non-multiples of 8.
    static constexpr int64_t kSizes[] = {0, 1, 7, 8, 511, 513, 4099, 32768, 70001};
    const int64_t n = trial % 3 == 0 ? kSizes[rng() % 9] : static_cast<int64_t>(rng() % 3000);
    std::vector<float> x(static_cast<size_t>(n));
    for (float& v : x) v = rng() % 50 == 0 ? 0.0f : dist(rng);  // zeros: division by zero
    std::vector<float> fast(x.size(), std::nanf("")), ref(x.size());
    kernels::RunChain(chain, scalars.data(), x.data(), fast.data(), n,
                      trial % 2 ? &parallel : nullptr);
    kernels::RunChainReference(chain, scalars.data(), x.data(), ref.data(), n);
    ExpectSameBits(fast.data(), ref.data(), n, "trial " + std::to_string(trial));
  }
}

Value Random(std::mt19937_64& rng, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return Value::Of(std::make_shared<Tensor>(
      *Tensor::FromValues<float>(std::move(shape), absl::Span<const float>(v))));
}

// Runs `text` with x (and any other feeds) fused and unfused, twice each (the second run on
// reused buffers), and checks the outputs have the same bits. Returns how many nodes ran
// inside a fused chain at the last fused run (reported with no outputs).
int ExpectFusedMatchesUnfused(const std::string& text, const Feeds& feeds) {
  int in_chain = 0;
  RunOptions fused;
  fused.node_done = [&](const Node&, const std::vector<Value>& outputs, double) {
    if (outputs.empty()) ++in_chain;
  };
  RunOptions unfused;
  unfused.fuse_elementwise = false;
  auto a = testing::ExecutorFromText(text, fused);
  auto b = testing::ExecutorFromText(text, unfused);
  EXPECT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  if (!a.ok() || !b.ok()) return -1;
  for (int run = 0; run < 2; ++run) {
    in_chain = 0;
    auto ya = (*a)->Run(feeds);
    auto yb = (*b)->Run(feeds);
    EXPECT_TRUE(ya.ok() && yb.ok()) << ya.status() << yb.status();
    if (!ya.ok() || !yb.ok()) return -1;
    EXPECT_EQ(ya->size(), yb->size());
    for (size_t i = 0; i < ya->size() && i < yb->size(); ++i) {
      EXPECT_TRUE((*ya)[i].is_tensor() && (*ya)[i].tensor != nullptr) << "output " << i;
      if (!(*ya)[i].is_tensor() || (*ya)[i].tensor == nullptr) return -1;
      const Tensor& ta = *(*ya)[i].tensor;
      const Tensor& tb = *(*yb)[i].tensor;
      EXPECT_EQ(ta.shape(), tb.shape());
      EXPECT_EQ(ta.dtype(), tb.dtype());
      if (ta.shape() != tb.shape()) continue;
      if (ta.dtype() == DType::kFloat64) {
        EXPECT_EQ(std::memcmp(ta.data<double>(), tb.data<double>(), ta.num_elements() * 8), 0)
            << "output " << i << " run " << run;
      }
      if (ta.dtype() != DType::kFloat32) continue;
      ExpectSameBits(ta.data<float>(), tb.data<float>(), ta.num_elements(),
                     "output " + std::to_string(i) + " run " + std::to_string(run));
    }
  }
  return in_chain;
}

// GELU as exporters write it (constants as Constant nodes and as initializers), on seeded
// random shapes.
TEST(ElementwiseChain, GeluRunsFusedWithTheBitsOfTheNodes) {
  constexpr char kGelu[] = R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[N, C, H, W] x) => (float[N, C, H, W] y) <float half = {0.5}> {
      c = Constant <value = float {1.4142135}> ()
      one = Constant <value = float {1.0}> ()
      d = Div(x, c)
      e = Erf(d)
      a = Add(e, one)
      m = Mul(x, a)
      y = Mul(m, half)
    })";
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<int64_t> shape = {1, static_cast<int64_t>(rng() % 8 + 1),
                                  static_cast<int64_t>(rng() % 40 + 1),
                                  static_cast<int64_t>(rng() % 40 + 1)};
    EXPECT_EQ(ExpectFusedMatchesUnfused(kGelu, {{"x", Random(rng, shape)}}), 4) << trial;
  }
}

// Hard-swish as MobileNetV3 exports it (HardSigmoid, then Mul by x), with the default and with
// explicit attributes, NaN and values around the clamps included: fused with the nodes' bits.
TEST(ElementwiseChain, HardSwishRunsFusedWithTheBitsOfTheNodes) {
  std::mt19937_64 rng(35);
  for (const char* attrs : {"", " <alpha = 0.1666667, beta = 0.5>"}) {
    const std::string text = std::string(R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[N, C, H, W] x) => (float[N, C, H, W] y) {
      s = HardSigmoid)") + attrs +
                             R"( (x)
      y = Mul(x, s)
    })";
    for (int trial = 0; trial < 6; ++trial) {
      std::vector<int64_t> shape = {1, static_cast<int64_t>(rng() % 8 + 1),
                                    static_cast<int64_t>(rng() % 30 + 1),
                                    static_cast<int64_t>(rng() % 30 + 1)};
      Value x = Random(rng, shape);
      float* v = x.tensor->data<float>();
      v[0] = std::nanf("");
      if (x.tensor->num_elements() > 2) v[1] = -3.0f, v[2] = 3.0f;
      EXPECT_EQ(ExpectFusedMatchesUnfused(text, {{"x", x}}), 1) << trial << attrs;
    }
  }
}

// Chains that must not fuse, or fall back at run time, still compute what the nodes compute.
TEST(ElementwiseChain, NonQualifyingChainsRunNodeByNode) {
  std::mt19937_64 rng(33);
  const Feeds feeds = {{"x", Random(rng, {2, 3, 5})}, {"z", Random(rng, {2, 3, 5})}};
  // The nodes that ran fused for a graph of x and z (the feeds) with `outputs`, initializers
  // `inits` and the nodes `body`.
  auto fused = [&](const std::string& outputs, const std::string& inits, const std::string& body) {
    return ExpectFusedMatchesUnfused(
        "<ir_version: 8, opset_import: [\"\" : 14]>\n"
        "g (float[2, 3, 5] x, float[2, 3, 5] z) => (" +
            outputs + ") " + inits + " {\n" + body + "\n}",
        feeds);
  };
  const std::string y = "float[2, 3, 5] y";
  // A scalar of higher rank than x broadcasts the output to rank 4: falls back at run time.
  EXPECT_EQ(
      fused("float[1, 2, 3, 5] y", "<float[1, 1, 1, 1] c = {2.0}>", "d = Mul(x, c)  y = Erf(d)"),
      0);
  // A per-channel constant is not a scalar: falls back.
  EXPECT_EQ(fused(y, "<float[5] c = {1, 2, 3, 4, 5}>", "d = Sub(c, x)  y = Div(d, x)"), 0);
  // An intermediate that is a graph output, one read twice, and a second outside tensor: no
  // chain qualifies.
  EXPECT_EQ(fused(y + ", float[2, 3, 5] d, float[2, 3, 5] w", "",
                  "d = Erf(x)  e = Add(d, x)  f = Mul(e, e)  g2 = Add(f, z)  w = Div(g2, x)"
                  "  y = Sub(x, e)"),
            0);
  // A value also read outside the chain (a graph output, another node's input) starts the
  // chain after it: only Erf and Add run fused, d is computed on its own.
  EXPECT_EQ(fused(y + ", float[2, 3, 5] d", "<float c = {3.0}>",
                  "d = Mul(x, c)  e = Erf(d)  y = Add(e, c)"),
            1);
  EXPECT_EQ(fused(y + ", float[2, 3, 5] w", "<float c = {3.0}>",
                  "d = Mul(x, c)  e = Erf(d)  y = Add(e, c)  w = Neg(d)"),
            1);
  // The chain's x and scalar are last read by other nodes between the chain's first node and
  // its sink: they must live until the sink runs the chain.
  EXPECT_EQ(fused(y + ", float[2, 3, 5] w, float[2, 3, 5] v", "<float c = {3.0}, float k = {0.5}>",
                  "d = Div(x, c)  w = Neg(x)  e = Erf(d)  v = Add(z, c)  y = Mul(e, k)"),
            2);
  // Longer than kMaxChainSteps: not a chain.
  std::string longer = "t0 = Erf(x)\n";
  for (int i = 1; i <= kernels::kMaxChainSteps; ++i) {
    longer += "t" + std::to_string(i) + " = Add(t" + std::to_string(i - 1) + ", x)\n";
  }
  longer += "y = Erf(t" + std::to_string(kernels::kMaxChainSteps) + ")";
  EXPECT_EQ(fused(y, "", longer), 0);
  // Integers: planned as a chain, refused at run time (x is not float).
  std::vector<int32_t> xi = {1, 2, 3, 4, 5, 6};
  const Feeds ints = {{"x", Value::Of(std::make_shared<Tensor>(*Tensor::FromValues<int32_t>(
                                {6}, absl::Span<const int32_t>(xi))))}};
  EXPECT_EQ(ExpectFusedMatchesUnfused(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (int32[6] x) => (int32[6] y) <int32 c = {3}> {
      d = Mul(x, c)
      y = Sub(d, x)
    })",
                                      ints),
            0);
}

// `count` seeded values in [-1, 1] as ONNX text ("{a, b, ...}").
std::string TextValues(std::mt19937_64& rng, int count) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::string out = "{";
  for (int i = 0; i < count; ++i) out += (i ? ", " : "") + std::to_string(dist(rng));
  return out + "}";
}

// A Conv whose output only a Relu reads runs the Relu inside it (OpContext::fused_relu): the
// same bits as the two nodes, for prepared (constant) and fed weights, float and double, a
// Conv -> Relu -> Conv -> Relu stack, and not when the Conv's output is also a graph output.
TEST(ConvRelu, FusedMatchesTheTwoNodes) {
  std::mt19937_64 rng(34);
  const std::string w1 = TextValues(rng, 6 * 3 * 9), w2 = TextValues(rng, 4 * 6 * 9),
                    b1 = TextValues(rng, 6), b2 = TextValues(rng, 4);
  for (const char* type : {"float", "double"}) {
    const std::string t = type;
    const std::string stack = R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g ()" + t + R"([1, 3, 9, 11] x) => ()" +
                              t + R"([1, 4, 9, 11] y) <)" + t + "[6, 3, 3, 3] w1 = " + w1 + ", " +
                              t + "[6] b1 = " + b1 + ", " + t + "[4, 6, 3, 3] w2 = " + w2 + ", " +
                              t + "[4] b2 = " + b2 + R"(> {
      c1 = Conv <pads = [1, 1, 1, 1]> (x, w1, b1)
      r1 = Relu(c1)
      c2 = Conv <pads = [1, 1, 1, 1]> (r1, w2, b2)
      y = Relu(c2)
    })";
    std::vector<double> xd(3 * 9 * 11);
    std::uniform_real_distribution<double> dist(-2, 2);
    for (double& v : xd) v = dist(rng);
    Value x;
    if (t == "float") {
      std::vector<float> xf(xd.begin(), xd.end());
      x = Value::Of(std::make_shared<Tensor>(
          *Tensor::FromValues<float>({1, 3, 9, 11}, absl::Span<const float>(xf))));
    } else {
      x = Value::Of(std::make_shared<Tensor>(
          *Tensor::FromValues<double>({1, 3, 9, 11}, absl::Span<const double>(xd))));
    }
    EXPECT_EQ(ExpectFusedMatchesUnfused(stack, {{"x", x}}), 2) << t;
    // Weights fed by the run (graph inputs): the per-call kernels, then the fused Relu.
    if (t == "float") {
      std::vector<float> wf(6 * 3 * 9);
      std::uniform_real_distribution<float> fd(-1, 1);
      for (float& v : wf) v = fd(rng);
      const Value w = Value::Of(std::make_shared<Tensor>(
          *Tensor::FromValues<float>({6, 3, 3, 3}, absl::Span<const float>(wf))));
      EXPECT_EQ(ExpectFusedMatchesUnfused(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[1, 3, 9, 11] x, float[6, 3, 3, 3] w) => (float[1, 6, 9, 11] y) {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      y = Relu(c)
    })",
                                          {{"x", x}, {"w", w}}),
                1);
    }
  }
  // The Conv's output is also a graph output: both nodes run.
  std::vector<float> xf(3 * 9 * 11, -0.5f);
  const Value x = Value::Of(std::make_shared<Tensor>(
      *Tensor::FromValues<float>({1, 3, 9, 11}, absl::Span<const float>(xf))));
  EXPECT_EQ(ExpectFusedMatchesUnfused(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[1, 3, 9, 11] x) => (float[1, 6, 9, 11] y, float[1, 6, 9, 11] c) <float[6, 3, 3, 3] w = )" +
                                          w1 + R"(> {
      c = Conv <pads = [1, 1, 1, 1]> (x, w)
      y = Relu(c)
    })",
                                      {{"x", x}}),
            0);
}

}  // namespace
}  // namespace onnx_bcast::runtime
