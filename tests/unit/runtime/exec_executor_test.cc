// The executor end to end on small models in ONNX text form: outer scopes, control flow with
// hand-computed values, buffer reuse across runs, unsupported ops, cycles, function inlining,
// error labels, and test-data values and comparison.
#include <cmath>
#include <filesystem>
#include <limits>
#include <tuple>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/model_io.h"
#include "proto/onnx.h"
#include "runtime/exec/compare.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/test_data.h"
#include "runtime/ops/registry.h"
#include "tests/unit/runtime/exec_harness.h"

namespace onnx_bcast::runtime {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<Executor>> FromText(const std::string& text,
                                                   const LoadOptions& options = {}) {
  absl::StatusOr<proto::Model> model = proto::ParseModelText(text);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::shared_ptr<const Model>> loaded = LoadRuntimeModel(*model, options);
  if (!loaded.ok()) return loaded.status();
  return Executor::Create(*loaded);
}

absl::StatusOr<std::unique_ptr<Executor>> FromProto(const onnx::ModelProto& proto) {
  absl::StatusOr<std::shared_ptr<const Model>> loaded = testing::LoadProto(proto);
  if (!loaded.ok()) return loaded.status();
  return Executor::Create(*loaded);
}

template <class T>
Value V(std::vector<int64_t> shape, std::initializer_list<T> values) {
  return Value::Of(std::make_shared<Tensor>(*Tensor::FromValues<T>(std::move(shape), values)));
}

Value Filled(int64_t n, float value) {
  std::vector<float> values(static_cast<size_t>(n), value);
  return Value::Of(
      std::make_shared<Tensor>(*Tensor::FromValues<float>({n}, absl::Span<const float>(values))));
}

template <class T>
std::vector<T> Values(const Value& v) {
  EXPECT_TRUE(v.is_tensor());
  if (!v.is_tensor()) return {};
  auto span = v.tensor->values<T>();
  return std::vector<T>(span.begin(), span.end());
}

TEST(Executor, RunsNodesAndFreesNothingItNeeds) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2] x, float[2] y) => (float[2] z, float[2] t) {
      t = Add(x, y)
      z = Add(t, y)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({{"x", V<float>({2}, {1, 2})}, {"y", V<float>({2}, {10, 20})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(21, 42));
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(11, 22));
}

TEST(Executor, MissingAndUnknownInputsAreRefused) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2] x) => (float[2] z) { z = Identity(x) })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_THAT((*exec)->Run({}).status().message(), HasSubstr("input 'x' was not given"));
  EXPECT_THAT(
      (*exec)->Run({{"x", V<float>({2}, {1, 2})}, {"nope", V<float>({1}, {1})}}).status().message(),
      HasSubstr("'nope' is not an input"));
}

TEST(Executor, SortsNodesGivenOutOfOrder) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[1] x) => (float[1] z) {
      z = Add(t, t)
      t = Add(x, x)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({{"x", V<float>({1}, {3})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(12));
}

TEST(Executor, RefusesCycles) {
  auto graph = std::make_shared<Graph>();
  graph->inputs = {"x"};
  graph->input_types = {DType::kFloat32};
  graph->input_shapes = {{1}};
  graph->input_symbols = {{""}};
  graph->input_shape_known = {true};
  graph->outputs = {"b"};
  for (auto [name, in, out] : {std::tuple{"a", "b", "a"}, std::tuple{"b", "a", "b"}}) {
    Node node;
    node.name = name;
    node.op_type = "Add";
    node.opset = 16;
    node.inputs = {"x", in};
    node.outputs = {out};
    graph->nodes.push_back(node);
  }
  auto model = std::make_shared<Model>();
  model->main = graph;
  auto exec = Executor::Create(model);
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(exec.status().message(), HasSubstr("cycle"));
}

TEST(Executor, UnsupportedOpNamesOpDomainAndOpset) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16, "com.example" : 3]>
    g (float[2] x) => (float[2] z) { z = com.example.Frobnicate(x) })");
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(exec.status().message(), HasSubstr("Frobnicate"));
  EXPECT_THAT(exec.status().message(), HasSubstr("com.example"));
  EXPECT_THAT(exec.status().message(), HasSubstr("opset 3"));
}

TEST(Executor, SecondRunWithSameShapesAllocatesNothing) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[64] x, float[64] y) => (float[64] z) {
      a = Add(x, y)
      b = Mul(a, y)
      c = Sub(b, x)
      z = Add(c, a)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  Feeds feeds = {{"x", Filled(64, 1)}, {"y", Filled(64, 2)}};
  // The first run lends the buffers of values past their last use to later outputs; the
  // second settles which buffer each output takes (an output kept for the caller keeps the
  // one it took); from then on runs allocate nothing.
  for (int i = 0; i < 2; ++i) {
    auto warm = (*exec)->Run(feeds);
    ASSERT_TRUE(warm.ok()) << warm.status();
  }
  const int64_t before = Tensor::AllocationCount();
  for (int i = 0; i < 3; ++i) {
    auto again = (*exec)->Run(feeds);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_THAT(Values<float>((*again)[0]), ::testing::Each(8.0f));  // (1+2)*2-1 + 3
  }
  EXPECT_EQ(Tensor::AllocationCount(), before);
}

// A caller that keeps each run's outputs until the next run has returned (`outs = Run()` in a
// loop) finds them intact: the next run writes another buffer. The executor keeps that
// buffer as a spare and swaps the two, so from the third run on nothing is allocated (before,
// every such run allocated its outputs afresh: 34 page faults a run for a 64 MB output).
// Outputs kept over several runs all stay intact too.
TEST(Executor, OutputsKeptThroughLaterRunsStayIntactAndRunsAllocateNothing) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[4096] x, float[4096] y) => (float[4096] z) {
      z = Add(x, y)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  std::vector<Feeds> feeds;
  for (int i = 0; i < 8; ++i) {
    feeds.push_back({{"x", Filled(4096, static_cast<float>(i))}, {"y", Filled(4096, 1)}});
  }
  std::vector<Value> kept;
  int64_t before = 0;
  for (int i = 0; i < 6; ++i) {
    if (i == 2) before = Tensor::AllocationCount();
    auto out = (*exec)->Run(feeds[i]);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ::testing::Each(static_cast<float>(i + 1)));
    if (i > 0) {
      EXPECT_THAT(Values<float>(kept[0]), ::testing::Each(static_cast<float>(i))) << "run " << i;
      EXPECT_NE(kept[0].tensor->raw_data(), (*out)[0].tensor->raw_data());
    }
    kept = *std::move(out);
  }
  EXPECT_EQ(Tensor::AllocationCount(), before);
  // Every output of three runs held at once: three buffers, none written twice.
  std::vector<Value> all;
  for (int i = 0; i < 3; ++i) {
    auto out = (*exec)->Run(feeds[i]);
    ASSERT_TRUE(out.ok()) << out.status();
    all.push_back((*out)[0]);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_THAT(Values<float>(all[i]), ::testing::Each(static_cast<float>(i + 1))) << "run " << i;
  }
}

// A chain of six values of 32 KiB (above BufferPool::kMinBytes), each dead once the next is
// made: their buffers are lent on, so the run allocates two or three buffers, not six, and
// later runs none; values stay right.
TEST(Executor, DeadValuesLendTheirBuffersToLaterOutputs) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[8192] x) => (float[8192] z) {
      a1 = Add(x, x)
      a2 = Add(a1, x)
      a3 = Add(a2, x)
      a4 = Add(a3, x)
      a5 = Add(a4, x)
      z = Add(a5, x)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  Feeds feeds = {{"x", Filled(8192, 1)}};
  const int64_t start = Tensor::AllocationCount();
  for (int i = 0; i < 2; ++i) {
    auto warm = (*exec)->Run(feeds);
    ASSERT_TRUE(warm.ok()) << warm.status();
    EXPECT_THAT(Values<float>((*warm)[0]), ::testing::Each(7.0f));
  }
  EXPECT_LE(Tensor::AllocationCount() - start, 3);
  const int64_t before = Tensor::AllocationCount();
  auto again = (*exec)->Run(feeds);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Values<float>((*again)[0]), ::testing::Each(7.0f));
  EXPECT_EQ(Tensor::AllocationCount(), before);
}

// Reshape, Squeeze, Unsqueeze, Flatten, Dropout and Identity pass their input's storage on
// (no copy), and holding nothing between runs, they leave their producers' buffers free for
// reuse: later runs allocate nothing and still compute the same values.
TEST(Executor, ViewsShareStorageAndLaterRunsAllocateNothing) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[64] x, float[64] y) => (float[8,8] z, float[1,64] f) {
      a = Add(x, y)
      s = Constant <value = int64[2] {8, 8}> ()
      r = Reshape(a, s)
      u0 = Constant <value = int64[1] {0}> ()
      u = Unsqueeze(r, u0)
      q = Squeeze(u, u0)
      d = Dropout(q)
      i = Identity(d)
      z = Mul(i, i)
      f = Flatten <axis = 0> (a)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  Feeds feeds = {{"x", Filled(64, 1)}, {"y", Filled(64, 2)}};
  {
    auto first = (*exec)->Run(feeds);
    ASSERT_TRUE(first.ok()) << first.status();
  }
  const int64_t before = Tensor::AllocationCount();
  for (int i = 0; i < 3; ++i) {
    auto again = (*exec)->Run(feeds);
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_THAT(Values<float>((*again)[0]), ::testing::Each(9.0f));
    EXPECT_THAT((*again)[0].tensor->shape(), ElementsAre(8, 8));
    EXPECT_THAT(Values<float>((*again)[1]), ::testing::Each(3.0f));
    EXPECT_FALSE((*again)[1].tensor->owns_data());  // a view of Add's output
  }
  EXPECT_EQ(Tensor::AllocationCount(), before);
}

// Nodes computed from constants only keep their first run's outputs; a run that feeds an
// initializer computes them from the fed value, and the next run from the initializer again.
TEST(Executor, ConstantNodesAreKeptUntilAnInitializerIsFed) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2] x) => (float[2] y) <float[2] w = {1.0, 2.0}> {
      c = Constant <value = float[2] {10, 20}> ()
      k = Add(w, c)
      y = Mul(x, k)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  for (int i = 0; i < 2; ++i) {
    auto out = (*exec)->Run({{"x", V<float>({2}, {1, 2})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(11, 44));
  }
  auto fed = (*exec)->Run({{"x", V<float>({2}, {1, 2})}, {"w", V<float>({2}, {0, 0})}});
  ASSERT_TRUE(fed.ok()) << fed.status();
  EXPECT_THAT(Values<float>((*fed)[0]), ElementsAre(10, 40));
  for (int i = 0; i < 2; ++i) {
    auto out = (*exec)->Run({{"x", V<float>({2}, {2, 1})}});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(22, 22));
  }
}

TEST(Executor, IfBranchesReadOuterScope) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (bool c, float[2] x, float[2] y) => (float[2] z) {
      s = Add(x, y)
      z = If (c) <
        then_branch = t () => (float[2] ty) { ty = Add(s, x) },
        else_branch = e () => (float[2] ey) { ey = Sub(s, y) }
      >
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto yes = (*exec)->Run(
      {{"c", V<bool>({}, {true})}, {"x", V<float>({2}, {1, 2})}, {"y", V<float>({2}, {10, 20})}});
  ASSERT_TRUE(yes.ok()) << yes.status();
  EXPECT_THAT(Values<float>((*yes)[0]), ElementsAre(12, 24));
  auto no = (*exec)->Run(
      {{"c", V<bool>({}, {false})}, {"x", V<float>({2}, {1, 2})}, {"y", V<float>({2}, {10, 20})}});
  ASSERT_TRUE(no.ok()) << no.status();
  EXPECT_THAT(Values<float>((*no)[0]), ElementsAre(1, 2));
}

// sum_{i<M} i carried, with the running sums as a scan output; the body reads an outer value.
constexpr char kLoopModel[] = R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (int64 m, bool c, int64 s0, int64 k) => (int64 s, int64[N] sums) {
      s, sums = Loop (m, c, s0) <
        body = b (int64 i, bool cin, int64 sin) => (bool cout, int64 sout, int64 sout2) {
          cout = Less(i, k)
          sout = Add(sin, i)
          sout2 = Identity(sout)
        }
      >
    })";

TEST(Executor, LoopRunsTripCountWithCarriedAndScanOutputs) {
  auto exec = FromText(kLoopModel);
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({{"m", V<int64_t>({}, {4})},
                           {"c", V<bool>({}, {true})},
                           {"s0", V<int64_t>({}, {100})},
                           {"k", V<int64_t>({}, {1000})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(106));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(100, 101, 103, 106));
  EXPECT_EQ((*out)[1].tensor->shape(), std::vector<int64_t>({4}));
}

TEST(Executor, LoopStopsOnCondition) {
  auto exec = FromText(kLoopModel);
  ASSERT_TRUE(exec.ok()) << exec.status();
  // cout = i < 1: iterations 0 and 1 run, then the condition is false.
  auto out = (*exec)->Run({{"m", V<int64_t>({}, {10})},
                           {"c", V<bool>({}, {true})},
                           {"s0", V<int64_t>({}, {0})},
                           {"k", V<int64_t>({}, {1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(1));
  EXPECT_THAT(Values<int64_t>((*out)[1]), ElementsAre(0, 1));
  // A false initial condition runs no iteration: an empty scan output.
  auto none = (*exec)->Run({{"m", V<int64_t>({}, {10})},
                            {"c", V<bool>({}, {false})},
                            {"s0", V<int64_t>({}, {7})},
                            {"k", V<int64_t>({}, {1})}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(Values<int64_t>((*none)[0]), ElementsAre(7));
  EXPECT_EQ((*none)[1].tensor->num_elements(), 0);
}

TEST(Executor, NestedSubgraphsSeeEveryEnclosingScope) {
  // A Loop inside an If branch: the body reads `k` from the main graph and `s` from the branch.
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (bool c, int64 m, int64 k) => (int64 z) {
      z = If (c) <
        then_branch = t () => (int64 tz) {
          s = Add(k, k)
          tz = Loop (m, , k) <
            body = b (int64 i, bool cin, int64 acc) => (bool cout, int64 acc_out) {
              cout = Identity(cin)
              acc_out = Add(acc, s)
            }
          >
        },
        else_branch = e () => (int64 ez) { ez = Identity(k) }
      >
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  // k + 3 * (2k) with k = 5.
  auto out = (*exec)->Run(
      {{"c", V<bool>({}, {true})}, {"m", V<int64_t>({}, {3})}, {"k", V<int64_t>({}, {5})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<int64_t>((*out)[0]), ElementsAre(35));
}

TEST(Executor, ThreadsGiveTheSameResults) {
  constexpr char kText[] = R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[100000] x, float[100000] y) => (float[100000] z) {
      a = Mul(x, y)
      z = Add(a, x)
    })";
  auto one = FromText(kText);
  ASSERT_TRUE(one.ok()) << one.status();
  absl::StatusOr<proto::Model> model = proto::ParseModelText(kText);
  ASSERT_TRUE(model.ok()) << model.status();
  auto loaded = LoadRuntimeModel(*model);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  RunOptions options;
  options.threads = 2;
  auto two = Executor::Create(*loaded, options);
  ASSERT_TRUE(two.ok()) << two.status();
  Feeds feeds = {{"x", Filled(100000, 1.5f)}, {"y", Filled(100000, -2.0f)}};
  auto a = (*one)->Run(feeds);
  auto b = (*two)->Run(feeds);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(CompareValues((*a)[0], (*b)[0], "z", {0, 0}).match);
  EXPECT_THAT(Values<float>((*b)[0]), ::testing::Each(-1.5f));
}

TEST(Executor, ScanReversedInputAndOutputAxes) {
  // Running sum over rows of x [3,2], input scanned backwards, outputs stacked along axis 1.
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2] init, float[3,2] x) => (float[2] last, float[2,3] rows) {
      last, rows = Scan (init, x) <
        num_scan_inputs = 1, scan_input_directions = [1], scan_output_axes = [1],
        body = b (float[2] acc, float[2] row) => (float[2] acc_out, float[2] row_out) {
          acc_out = Add(acc, row)
          row_out = Identity(acc_out)
        }
      >
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out =
      (*exec)->Run({{"init", V<float>({2}, {0, 0})}, {"x", V<float>({3, 2}, {1, 2, 3, 4, 5, 6})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(9, 12));
  // Iterations see rows 2, 1, 0: sums [5,6], [8,10], [9,12]; stacked along axis 1.
  EXPECT_THAT(Values<float>((*out)[1]), ElementsAre(5, 8, 9, 6, 10, 12));
  EXPECT_EQ((*out)[1].tensor->shape(), std::vector<int64_t>({2, 3}));
}

TEST(Executor, Scan8RefusesScanOutputsThatChangeShape) {
  // The state grows by one element per iteration, and so does the scan output: stacking the
  // items used to size the buffer from the first and write the larger ones past its end.
  auto exec = FromText(R"(
    <ir_version: 3, opset_import: ["" : 8]>
    g (int64[1] lens, float[1,1] init, float[1,3,1] x) => (float[1,?] last, float[1,3,?] all) {
      last, all = Scan (lens, init, x) <
        num_scan_inputs = 1,
        body = b (float[?] s, float[1] n) => (float[?] s_out, float[?] c) {
          s_out = Concat <axis = 0> (s, n)
          c = Identity(s_out)
        }
      >
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run({{"lens", V<int64_t>({1}, {3})},
                           {"init", V<float>({1, 1}, {0})},
                           {"x", V<float>({1, 3, 1}, {1, 2, 3})}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("between iterations"));
}

TEST(Executor, ErrorsInsideSubgraphsNameTheChainOfNodes) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (bool c, float[2] x, float[3] y) => (float[2] z) {
      z = If (c) <
        then_branch = t () => (float[2] ty) { ty = Add(x, y) },
        else_branch = e () => (float[2] ey) { ey = Identity(x) }
      >
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run(
      {{"c", V<bool>({}, {true})}, {"x", V<float>({2}, {1, 2})}, {"y", V<float>({3}, {1, 2, 3})}});
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(out.status().message(), HasSubstr("If 'If#0'"));
  EXPECT_THAT(out.status().message(), HasSubstr("Add 'Add#0'"));
}

TEST(Loader, InlinesModelLocalFunctionsWithAttributeReferences) {
  // Scale(X) = X * alpha (alpha bound through ref_attr_name), called twice.
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(16);
  auto* local = m.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  onnx::FunctionProto* f = m.add_functions();
  f->set_name("Scale");
  f->set_domain("local");
  f->add_input("X");
  f->add_output("Y");
  f->add_attribute("alpha");
  *f->add_opset_import() = *op;
  onnx::NodeProto* c = f->add_node();
  c->set_op_type("Constant");
  c->add_output("k");
  onnx::AttributeProto* ref = c->add_attribute();
  ref->set_name("value_float");
  ref->set_type(onnx::AttributeProto::FLOAT);
  ref->set_ref_attr_name("alpha");
  onnx::NodeProto* mul = f->add_node();
  mul->set_op_type("Mul");
  mul->add_input("X");
  mul->add_input("k");
  mul->add_output("Y");
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  auto add_value = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    v->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  };
  add_value(g->add_input(), "x");
  add_value(g->add_output(), "y");
  for (auto [in, out, alpha] : {std::tuple{"x", "t", 3.0f}, std::tuple{"t", "y", 10.0f}}) {
    onnx::NodeProto* call = g->add_node();
    call->set_op_type("Scale");
    call->set_domain("local");
    call->add_input(in);
    call->add_output(out);
    onnx::AttributeProto* a = call->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(alpha);
  }
  auto exec = FromProto(m);
  ASSERT_TRUE(exec.ok()) << exec.status();
  // Internal names are renamed per call, so the two "k"s do not collide.
  EXPECT_EQ((*exec)->graph().nodes.size(), 4u);
  auto out = (*exec)->Run({{"x", V<float>({2}, {1, 2})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(30, 60));
}

TEST(Loader, ExpandsOpsLibonnxDefinesAsFunctions) {
  // NegativeLogLikelihoodLoss (a context-dependent function in libonnx), mean reduction:
  // -(x[0,2] + x[1,0]) / 2 = -(-0.5 + -2) / 2 = 1.25.
  constexpr char kText[] = R"(
    <ir_version: 8, opset_import: ["" : 13]>
    g (float[2,3] x, int64[2] t) => (float loss) {
      loss = NegativeLogLikelihoodLoss(x, t)
    })";
  auto exec = FromText(kText);
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto out = (*exec)->Run(
      {{"x", V<float>({2, 3}, {-1, -3, -0.5, -2, -4, -6})}, {"t", V<int64_t>({2}, {2, 0})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(1.25f));
  if (FindOp("", "NegativeLogLikelihoodLoss", 13) == nullptr) {
    // Without expansion the op has no kernel.
    LoadOptions no_expand;
    no_expand.expand_schema_functions = false;
    auto refused = FromText(kText, no_expand);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnimplemented);
  }
}

TEST(Loader, NamesUnnamedNodesAndDecodesInitializers) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 16]>
    g (float[2] x) => (float[2] z) <float[2] w = {5, 7}> { z = Add(x, w) })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ((*exec)->graph().nodes[0].name, "Add#0");
  EXPECT_THAT((*exec)->graph().inputs, ElementsAre("x"));
  auto out = (*exec)->Run({{"x", V<float>({2}, {1, 1})}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Values<float>((*out)[0]), ElementsAre(6, 8));
  // An initializer may be overridden by name.
  auto over = (*exec)->Run({{"x", V<float>({2}, {1, 1})}, {"w", V<float>({2}, {0, 0})}});
  ASSERT_TRUE(over.ok()) << over.status();
  EXPECT_THAT(Values<float>((*over)[0]), ElementsAre(1, 1));
}

TEST(Compare, TolerancesNaNAndExactIntegers) {
  EXPECT_TRUE(CompareValues(V<float>({2}, {1.0f, NAN}), V<float>({2}, {1.0005f, NAN}), "y").match);
  Comparison off = CompareValues(V<float>({3}, {1, 2, 3}), V<float>({3}, {1, 2.5, 3}), "y");
  EXPECT_FALSE(off.match);
  EXPECT_THAT(off.message,
              HasSubstr("'y' differs at index 1 [1]: got 2, expected 2.5; 1 element(s) differ"));
  EXPECT_DOUBLE_EQ(off.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(off.max_rel_error, 0.2);
  EXPECT_FALSE(CompareValues(V<int64_t>({1}, {3}), V<int64_t>({1}, {4}), "i").match);
  EXPECT_THAT(CompareValues(V<float>({2}, {1, 2}), V<float>({1, 2}, {1, 2}), "s").message,
              HasSubstr("shape"));
  EXPECT_THAT(CompareValues(V<float>({1}, {1}), V<double>({1}, {1}), "d").message,
              HasSubstr("dtype"));
  EXPECT_FALSE(CompareValues(V<float>({1}, {INFINITY}), V<float>({1}, {-INFINITY}), "i").match);
}

TEST(TestData, SequencesAndEmptyOptionalsRoundTrip) {
  const std::string dir = ::testing::TempDir() + "/exec_test_data";
  std::filesystem::remove_all(dir);
  Value seq =
      Value::Sequence({V<float>({2}, {1, 2}).tensor, V<float>({1}, {3}).tensor}, DType::kFloat32);
  Value none = Value::EmptyOptional(DType::kFloat32);
  ASSERT_TRUE(SaveOutputs({seq, none}, {"s", "o"}, dir).ok());
  onnx::TypeProto seq_type;
  seq_type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  onnx::TypeProto opt_type;
  opt_type.mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto s = LoadValue(dir + "/output_0.pb", &seq_type);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(CompareValues(*s, seq, "s").match);
  auto o = LoadValue(dir + "/output_1.pb", &opt_type);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->kind, Value::Kind::kOptionalNone);
}

// Found by fuzz_test_data: a present optional (a plain tensor or sequence at runtime) was
// written as a bare TensorProto/SequenceProto, which LoadValue under the declared optional type
// parsed as an OptionalProto: the value came back as an empty optional.
TEST(TestData, PresentOptionalsRoundTripWrapped) {
  const std::string dir = ::testing::TempDir() + "/exec_test_data_optional";
  std::filesystem::remove_all(dir);
  Value tensor = V<float>({2}, {1, 2});
  Value seq = Value::Sequence({V<float>({1}, {3}).tensor}, DType::kFloat32);
  onnx::TypeProto opt_tensor, opt_seq;
  opt_tensor.mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  opt_seq.mutable_optional_type()
      ->mutable_elem_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  ASSERT_TRUE(SaveOutputs({tensor, seq}, {"t", "s"}, dir, {&opt_tensor, &opt_seq}).ok());
  auto t = LoadValue(dir + "/output_0.pb", &opt_tensor);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->kind, Value::Kind::kTensor);
  EXPECT_TRUE(CompareValues(*t, tensor, "t").match);
  auto s = LoadValue(dir + "/output_1.pb", &opt_seq);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->kind, Value::Kind::kSequence);
  EXPECT_TRUE(CompareValues(*s, seq, "s").match);
  // Read back and written again, the wrapper stays.
  auto raw = RawFromValue(*t, "t", &opt_tensor);
  ASSERT_TRUE(raw.ok());
  EXPECT_TRUE(raw->in_optional);
}

}  // namespace
}  // namespace onnx_bcast::runtime

namespace onnx_bcast::runtime {
namespace {

// Each planning op (Add, Expand, MatMul, Where, Sum, LayerNormalization) builds its plan at
// the first run of an input signature and reuses it; new shapes, or a new Expand target,
// rebuild exactly the plans of the nodes they reach, and results follow the new shapes.
TEST(Executor, PlansAreBuiltOncePerShapeTuple) {
  auto exec = FromText(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[N,3] x, float[3] y, int64[2] s, float[3,2] w, bool[3] c) => (float[M,2] z, float[N,3] v) {
      a = Add(x, y)
      e = Expand(a, s)
      z = MatMul(e, w)
      t = Where(c, a, y)
      u = Sum(t, y, x)
      v = LayerNormalization(u, y)
    })");
  ASSERT_TRUE(exec.ok()) << exec.status();
  auto feeds = [](int64_t n, int64_t rows) {
    std::vector<float> x(static_cast<size_t>(3 * n), 1.0f);
    return Feeds{{"x", Value::Of(std::make_shared<Tensor>(
                           *Tensor::FromValues<float>({n, 3}, absl::Span<const float>(x))))},
                 {"y", V<float>({3}, {1, 2, 3})},
                 {"s", V<int64_t>({2}, {rows, 3})},
                 {"w", V<float>({3, 2}, {1, 0, 0, 1, 1, 1})},
                 {"c", V<bool>({3}, {true, false, true})}};
  };
  EXPECT_EQ((*exec)->plan_builds(), 0);
  auto first = (*exec)->Run(feeds(1, 4));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*exec)->plan_builds(), 6);
  EXPECT_EQ((*first)[0].tensor->shape(), (std::vector<int64_t>{4, 2}));
  // x + y = [2,3,4]; times w: [2+4, 3+4].
  EXPECT_THAT(Values<float>((*first)[0]), ElementsAre(6, 7, 6, 7, 6, 7, 6, 7));

  auto second = (*exec)->Run(feeds(1, 4));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*exec)->plan_builds(), 6) << "same shapes must reuse every plan";

  // A new Expand target with the same shapes rebuilds Expand's plan and MatMul's (its input
  // shape changed), nothing else.
  auto third = (*exec)->Run(feeds(1, 2));
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ((*exec)->plan_builds(), 8);
  EXPECT_EQ((*third)[0].tensor->shape(), (std::vector<int64_t>{2, 2}));

  // A new batch: every node but MatMul sees new shapes (Expand still yields [2,3]).
  auto fourth = (*exec)->Run(feeds(2, 2));
  ASSERT_TRUE(fourth.ok()) << fourth.status();
  EXPECT_EQ((*exec)->plan_builds(), 13);
  EXPECT_EQ((*fourth)[1].tensor->shape(), (std::vector<int64_t>{2, 3}));
  auto fifth = (*exec)->Run(feeds(2, 2));
  ASSERT_TRUE(fifth.ok()) << fifth.status();
  EXPECT_EQ((*exec)->plan_builds(), 13);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(Values<float>((*fourth)[i]), Values<float>((*fifth)[i]));
  }
}

}  // namespace
}  // namespace onnx_bcast::runtime
