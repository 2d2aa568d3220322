// Per-node prepared state (issue #32): a Conv with constant weights packs them once per node
// and input shape, charges them to the memory budget, repacks when the shapes change, and a
// run that feeds the weights computes from the fed ones without touching the packed state.
// Which path each geometry takes is asserted (issue 43 item 5), with oneDNN and without it:
// ctest runs the Prepared.ConvPath* cases a second time with BCAST_CONV_ONEDNN=0.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/onnx.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/profile.h"
#include "runtime/kernels/conv.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/reference/conv.h"
#include "tests/unit/runtime/exec_harness.h"

namespace onnx_bcast::runtime {
namespace {

std::vector<float> Seeded(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void SetInfo(onnx::ValueInfoProto* v, const std::string& name, std::vector<std::string> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (const std::string& d : dims) {
    if (d[0] >= '0' && d[0] <= '9') {
      t->mutable_shape()->add_dim()->set_dim_value(std::stoll(d));
    } else {
      t->mutable_shape()->add_dim()->set_dim_param(d);
    }
  }
}

void AddInitializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> shape,
                    const std::vector<float>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

constexpr int64_t kC = 5, kM = 12;

// y = Conv(x[1, 5, H, W], w[12, 5, 3, 3], b[12]), pads 1; w and b initializers (which a run
// may feed).
onnx::ModelProto ConvModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  SetInfo(g->add_input(), "x", {"1", "5", "H", "W"});
  SetInfo(g->add_output(), "y", {"1", "12", "H", "W"});
  AddInitializer(g, "w", {kM, kC, 3, 3}, Seeded(1, kM * kC * 9));
  AddInitializer(g, "b", {kM}, Seeded(2, kM));
  onnx::NodeProto* conv = g->add_node();
  conv->set_op_type("Conv");
  conv->set_name("conv");
  conv->add_input("x");
  conv->add_input("w");
  conv->add_input("b");
  conv->add_output("y");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  return m;
}

Value Tensor4(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Value::Of(std::make_shared<Tensor>(
      *Tensor::FromValues<float>(std::move(shape), absl::Span<const float>(v))));
}

// The reference convolution of x [1, 5, h, w] with weights `wv`.
std::vector<float> Reference(int64_t h, int64_t w, const std::vector<float>& x,
                             const std::vector<float>& wv) {
  kernels::WindowGeometry g{{h, w}, {h, w}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  const std::vector<float> b = Seeded(2, kM);
  std::vector<float> y(static_cast<size_t>(kM * h * w));
  kernels::reference::Conv<float>(g, 1, kC, kM, 1, x.data(), wv.data(), b.data(), y.data());
  return y;
}

void ExpectNear(const Value& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_TRUE(got.is_tensor()) << what;
  auto span = got.tensor->values<float>();
  ASSERT_EQ(span.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(span[i], want[i], 1e-4) << what << " " << i;
}

// The path PrepareConv2D's rule gives a geometry, by name ("onednn" for both of oneDNN's
// source layouts), or "none".
std::string RulePath(int64_t c, int64_t m, int64_t group, int64_t k, int64_t h, int64_t w,
                     int64_t pad) {
  const int64_t oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
  kernels::WindowGeometry g{{h, w}, {oh, ow}, {k, k}, {1, 1}, {1, 1}, {pad, pad}, {pad, pad}};
  const std::vector<float> weights = Seeded(4, static_cast<size_t>(m * (c / group) * k * k));
  std::unique_ptr<kernels::PreparedConv> p =
      kernels::PrepareConv2D(g, 1, c, m, group, weights.data(), true);
  return p == nullptr ? "none" : kernels::ConvPathName(p->path());
}

// The rule of PrepareConv2D (conv.cc): with oneDNN every geometry but a pointwise one over more
// than 64 pixels goes to oneDNN; without it, maps of at most 8 pixels (not depthwise) go to
// the small-map kernel and the rest to im2col + OpenBLAS. A rule replaced by `false` computes
// the same values, so only the path tells.
TEST(Prepared, ConvPathRuleSendsEachGeometryWhereItWasMeasuredFastest) {
  const bool onednn = kernels::OneDnnConvAvailable();
  struct Case {
    const char* what;
    int64_t c, m, group, k, h, w, pad;
    const char* with_onednn;
    const char* without;
  };
  const Case cases[] = {
      {"3x3 over 2x3", kC, kM, 1, 3, 2, 3, 1, "onednn", "small-map"},
      {"3x3 over 8x9", kC, kM, 1, 3, 8, 9, 1, "onednn", "im2col-blas"},
      {"1x1 over 2x2", 8, 16, 1, 1, 2, 2, 0, "onednn", "small-map"},
      {"1x1 over 8x8 (64 pixels)", 8, 16, 1, 1, 8, 8, 0, "onednn", "im2col-blas"},
      {"1x1 over 9x9 (81 pixels)", 8, 16, 1, 1, 9, 9, 0, "im2col-blas", "im2col-blas"},
      {"depthwise 3x3 over 2x2", 8, 8, 8, 3, 2, 2, 1, "onednn", "im2col-blas"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RulePath(c.c, c.m, c.group, c.k, c.h, c.w, c.pad), onednn ? c.with_onednn : c.without)
        << c.what << (onednn ? " with oneDNN" : " without oneDNN");
  }
}

// The same through the executor: the label each shape's prepared state reports (--profile).
TEST(Prepared, ConvPathOfEachShapeThroughTheExecutor) {
  const bool onednn = kernels::OneDnnConvAvailable();
  absl::StatusOr<std::shared_ptr<const Model>> loaded = testing::LoadProto(ConvModel());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  std::vector<std::string> labels;
  RunOptions options;
  options.node_prepared = [&](const Node&, double, int64_t, const std::string& label) {
    labels.push_back(label);
  };
  auto exec = Executor::Create(*loaded, options);
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (const auto& [h, w] : {std::pair<int64_t, int64_t>{2, 3}, {8, 9}}) {
    const Value x = Tensor4({1, kC, h, w}, Seeded(10 + h, static_cast<size_t>(kC * h * w)));
    ASSERT_TRUE((*exec)->Run({{"x", x}}).ok());
  }
  ASSERT_EQ(labels.size(), 2u);
  if (onednn) {
    EXPECT_EQ(labels[0].rfind("onednn", 0), 0u) << "2x3: " << labels[0];
    EXPECT_EQ(labels[1].rfind("onednn", 0), 0u) << "8x9: " << labels[1];
  } else {
    EXPECT_EQ(labels[0], "small-map");
    EXPECT_EQ(labels[1], "im2col-blas");
  }
}

TEST(Prepared, ConvPacksConstantWeightsOncePerShapeAndFedWeightsBypassIt) {
  absl::StatusOr<std::shared_ptr<const Model>> loaded = testing::LoadProto(ConvModel());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  RunOptions options;
  options.memory = std::make_shared<MemoryBudget>(int64_t{1} << 30);
  std::shared_ptr<MemoryBudget> budget = options.memory;
  auto exec = Executor::Create(*loaded, options);
  ASSERT_TRUE(exec.ok()) << exec.status();
  const std::vector<float> w0 = Seeded(1, kM * kC * 9), w1 = Seeded(3, kM * kC * 9);
  // Sizes for every rule branch: 2x3 (small map), 8x9 (oneDNN where built, else im2col).
  for (const auto& [h, w] : {std::pair<int64_t, int64_t>{2, 3}, {8, 9}}) {
    const int64_t prepares = (*exec)->prepares();
    const std::vector<float> x = Seeded(10 + h, static_cast<size_t>(kC * h * w));
    const Value xv = Tensor4({1, kC, h, w}, x);
    const std::string at = std::to_string(h) + "x" + std::to_string(w);
    for (int run = 0; run < 2; ++run) {
      auto out = (*exec)->Run({{"x", xv}});
      ASSERT_TRUE(out.ok()) << out.status();
      ExpectNear((*out)[0], Reference(h, w, x, w0), at + " own weights");
      EXPECT_EQ((*exec)->prepares(), prepares + 1) << at << ": packed once, at the first run";
    }
    // The packed bytes are charged while they are held.
    EXPECT_GE(budget->live(), (*exec)->prepared_bytes()) << at;
    // Fed weights: computed from them, nothing repacked into the node's state.
    auto fed = (*exec)->Run({{"x", xv}, {"w", Tensor4({kM, kC, 3, 3}, w1)}});
    ASSERT_TRUE(fed.ok()) << fed.status();
    ExpectNear((*fed)[0], Reference(h, w, x, w1), at + " fed weights");
    EXPECT_EQ((*exec)->prepares(), prepares + 1) << at;
    // And the model's own weights again.
    auto again = (*exec)->Run({{"x", xv}});
    ASSERT_TRUE(again.ok()) << again.status();
    ExpectNear((*again)[0], Reference(h, w, x, w0), at + " own weights after a feed");
    EXPECT_EQ((*exec)->prepares(), prepares + 1) << at;
  }
  exec->reset();
  EXPECT_EQ(budget->live(), 0) << "the prepared bytes are refunded with the executor";
}

// With a memory budget too small for the packed weights, the node computes unprepared.
TEST(Prepared, RefusedByTheBudgetTheConvStillComputes) {
  absl::StatusOr<std::shared_ptr<const Model>> loaded = testing::LoadProto(ConvModel());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const int64_t h = 16, w = 16;
  // Output [1, 12, 16, 16] floats (12 KiB) fits; the blocked layouts' copies of x and y and the
  // packed weights (oneDNN) do not.
  RunOptions options;
  options.memory = std::make_shared<MemoryBudget>(kM * h * w * 4 + 4096);
  auto exec = Executor::Create(*loaded, options);
  ASSERT_TRUE(exec.ok()) << exec.status();
  const std::vector<float> x = Seeded(7, static_cast<size_t>(kC * h * w));
  auto out = (*exec)->Run({{"x", Tensor4({1, kC, h, w}, x)}});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear((*out)[0], Reference(h, w, x, Seeded(1, kM * kC * 9)), "under a small budget");
  EXPECT_LE((*exec)->prepared_bytes(), 4096);
  if (!kernels::OneDnnConvAvailable()) return;  // the in-place paths hold no bytes to refuse
  // The prepare was refused, not merely small: nothing prepared, the budget said no, and the
  // same shape under a large budget holds more than the small one had room for.
  EXPECT_EQ((*exec)->prepares(), 0);
  EXPECT_EQ((*exec)->prepared_bytes(), 0);
  EXPECT_GT(options.memory->refusals(), 0);
  RunOptions large;
  large.memory = std::make_shared<MemoryBudget>(int64_t{1} << 30);
  auto unlimited = Executor::Create(*loaded, large);
  ASSERT_TRUE(unlimited.ok()) << unlimited.status();
  ASSERT_TRUE((*unlimited)->Run({{"x", Tensor4({1, kC, h, w}, x)}}).ok());
  EXPECT_EQ((*unlimited)->prepares(), 1);
  EXPECT_GT((*unlimited)->prepared_bytes(), 4096);
}

// run --profile's plan-time figures: the executor reports the prepare apart (node_prepared),
// once per shape, and RunProfile keeps it across ResetRuns (the warm-up dropped by --bench).
TEST(Prepared, ProfileReportsPlanTimeApartFromRunTime) {
  absl::StatusOr<std::shared_ptr<const Model>> loaded = testing::LoadProto(ConvModel());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  RunProfile profile;
  int prepared_calls = 0;
  RunOptions options;
  options.node_done = [&](const Node& node, const std::vector<Value>& outputs, double seconds) {
    profile.Record(node, outputs, seconds);
  };
  options.node_prepared = [&](const Node& node, double seconds, int64_t bytes,
                              const std::string& label) {
    ++prepared_calls;
    profile.RecordPrepare(node, seconds, bytes, label);
  };
  auto exec = Executor::Create(*loaded, options);
  ASSERT_TRUE(exec.ok()) << exec.status();
  const Value x = Tensor4({1, kC, 6, 7}, Seeded(5, kC * 6 * 7));
  for (int run = 0; run < 3; ++run) ASSERT_TRUE((*exec)->Run({{"x", x}}).ok());
  EXPECT_EQ(prepared_calls, 1) << "prepared at the first run only";
  profile.ResetRuns();
  ASSERT_TRUE((*exec)->Run({{"x", x}}).ok());
  profile.EndRun();
  const std::vector<RunProfile::NodeTime> nodes = profile.Nodes();
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].calls, 1);
  EXPECT_GT(nodes[0].prepare_seconds, 0);
  EXPECT_FALSE(nodes[0].prepared.empty());
  EXPECT_EQ(nodes[0].prepared_bytes, (*exec)->prepared_bytes());
  EXPECT_GT(profile.prepare_seconds(), 0);
}

}  // namespace
}  // namespace onnx_bcast::runtime
