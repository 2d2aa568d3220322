// RNN, GRU and LSTM: the BLAS cell against the plain-loop reference on random sizes, and ops
// against hand-computed values (directions, sequence_lens, layout).
#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/kernels/reference/rnn.h"
#include "runtime/kernels/rnn.h"
#include "tests/unit/runtime/ops_harness.h"

namespace onnx_bcast::runtime {
namespace {

using kernels::RnnCell;
using testing::IntAttr;
using testing::MakeNode;
using testing::RandomFloats;
using testing::RunNode;
using testing::StringAttr;

TEST(RnnKernel, FastMatchesReferenceForEveryCell) {
  std::mt19937_64 rng(9);
  for (int iter = 0; iter < 90; ++iter) {
    kernels::RnnParams p;
    p.cell = static_cast<RnnCell>(iter % 3);
    p.seq = rng() % 4 + 1;
    p.batch = rng() % 3 + 1;
    p.input = rng() % 4 + 1;
    p.hidden = rng() % 4 + 1;
    kernels::RnnActivation::Parse("Sigmoid", NAN, NAN, &p.f);
    kernels::RnnActivation::Parse(p.cell == RnnCell::kRnn ? "Sigmoid" : "Tanh", NAN, NAN, &p.g);
    kernels::RnnActivation::Parse("Tanh", NAN, NAN, &p.h);
    p.reverse = rng() & 1;
    p.linear_before_reset = rng() & 1;
    p.clip = (rng() & 1) ? 0.5 : 0;
    const int64_t gh = kernels::RnnGates(p.cell) * p.hidden;
    const auto x = RandomFloats(rng, p.seq * p.batch * p.input);
    const auto w = RandomFloats(rng, gh * p.input);
    const auto r = RandomFloats(rng, gh * p.hidden);
    const auto b = RandomFloats(rng, 2 * gh);
    const auto peep = RandomFloats(rng, 3 * p.hidden);
    const auto h0 = RandomFloats(rng, p.batch * p.hidden);
    std::vector<int64_t> lens(p.batch);
    for (int64_t& l : lens) l = rng() % (p.seq + 1);
    const int64_t bh = p.batch * p.hidden;
    std::vector<float> y1(p.seq * bh), y2(y1.size()), h1(bh), h2(bh), c1(bh), c2(bh);
    kernels::RnnDirectionFast<float>(p, x.data(), w.data(), r.data(), b.data(), peep.data(),
                                     lens.data(), h0.data(), h0.data(), y1.data(), bh, h1.data(),
                                     c1.data());
    kernels::reference::RnnDirection<float>(p, x.data(), w.data(), r.data(), b.data(), peep.data(),
                                            lens.data(), h0.data(), h0.data(), y2.data(), bh,
                                            h2.data(), c2.data());
    for (size_t i = 0; i < y1.size(); ++i) ASSERT_NEAR(y1[i], y2[i], 1e-5) << iter;
    for (size_t i = 0; i < h1.size(); ++i) ASSERT_NEAR(h1[i], h2[i], 1e-5) << iter;
    for (size_t i = 0; i < c1.size(); ++i) ASSERT_NEAR(c1[i], c2[i], 1e-5) << iter;
  }
}

Tensor Floats(std::vector<int64_t> shape, std::vector<float> v) {
  return *Tensor::FromValues<float>(std::move(shape), absl::Span<const float>(v));
}

TEST(RnnOp, BidirectionalIdentityRecurrence) {
  // hidden 1, W = 1, R = 1, Relu: forward H_t = sum x[0..t], reverse H_t = sum x[t..].
  Node node = MakeNode("RNN", 3, 2, 14);
  node.attrs["direction"] = StringAttr("bidirectional");
  node.attrs["hidden_size"] = IntAttr(1);
  Attribute acts;
  acts.type = Attribute::Type::kStrings;
  acts.strings = {"Relu", "Relu"};
  node.attrs["activations"] = acts;
  Tensor x = Floats({3, 1, 1}, {1, 2, 3});
  Tensor w = Floats({2, 1, 1}, {1, 1});
  Tensor r = Floats({2, 1, 1}, {1, 1});
  auto out = RunNode(node, {&x, &w, &r});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{3, 2, 1, 1}));
  const auto y = (*out)[0].tensor->values<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{1, 6, 3, 5, 6, 3}));
  const auto yh = (*out)[1].tensor->values<float>();
  EXPECT_EQ(std::vector<float>(yh.begin(), yh.end()), (std::vector<float>{6, 6}));
}

TEST(RnnOp, SequenceLensAndBatchFirstLayout) {
  Node node = MakeNode("RNN", 5, 2, 14);
  node.attrs["hidden_size"] = IntAttr(1);
  node.attrs["layout"] = IntAttr(1);
  Attribute acts;
  acts.type = Attribute::Type::kStrings;
  acts.strings = {"Relu"};
  node.attrs["activations"] = acts;
  Tensor x = Floats({2, 2, 1}, {1, 2, 3, 4});  // [batch, seq, input]
  Tensor w = Floats({1, 1, 1}, {1});
  Tensor r = Floats({1, 1, 1}, {1});
  Tensor lens = *Tensor::FromValues<int32_t>({2}, {1, 2});
  auto out = RunNode(node, {&x, &w, &r, nullptr, &lens});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].tensor->shape(), (std::vector<int64_t>{2, 2, 1, 1}));
  const auto y = (*out)[0].tensor->values<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.end()), (std::vector<float>{1, 0, 3, 7}));
  const auto yh = (*out)[1].tensor->values<float>();
  EXPECT_EQ(std::vector<float>(yh.begin(), yh.end()), (std::vector<float>{1, 7}));
}

TEST(LstmOp, SingleStepByHand) {
  // hidden 1, zero weights but biases: i = o = f = sigmoid(0) = 0.5, c~ = tanh(b_c).
  Node node = MakeNode("LSTM", 4, 3, 14);
  node.attrs["hidden_size"] = IntAttr(1);
  Tensor x = Floats({1, 1, 1}, {0});
  Tensor w = Floats({1, 4, 1}, {0, 0, 0, 0});
  Tensor r = Floats({1, 4, 1}, {0, 0, 0, 0});
  Tensor b = Floats({1, 8}, {0, 0, 0, 1, 0, 0, 0, 0});
  auto out = RunNode(node, {&x, &w, &r, &b});
  ASSERT_TRUE(out.ok()) << out.status();
  const double c = 0.5 * std::tanh(1.0);
  EXPECT_NEAR((*out)[2].tensor->data<float>()[0], c, 1e-6);
  EXPECT_NEAR((*out)[1].tensor->data<float>()[0], 0.5 * std::tanh(c), 1e-6);
}

TEST(GruOp, WrongWeightShapeIsAnError) {
  Node node = MakeNode("GRU", 3, 1, 14);
  node.attrs["hidden_size"] = IntAttr(2);
  Tensor x = Floats({1, 1, 1}, {0});
  Tensor w = Floats({1, 3, 1}, {0, 0, 0});
  EXPECT_FALSE(RunNode(node, {&x, &w, &w}).ok());
}

}  // namespace
}  // namespace onnx_bcast::runtime
