// RunProfile's medians (run --profile): per node, per op type and per run, over the recorded
// runs, beside the means; a node first seen in a later run counts zero for the runs before.
#include <vector>

#include "gtest/gtest.h"
#include "runtime/exec/profile.h"

namespace onnx_bcast::runtime {
namespace {

Node MakeNode(const std::string& name, const std::string& op) {
  Node n;
  n.name = name;
  n.op_type = op;
  return n;
}

TEST(RunProfile, MediansIgnoreOneSlowRunWhereMeansDoNot) {
  const Node conv = MakeNode("conv", "Conv");
  const Node relu = MakeNode("relu", "Relu");
  const Node late = MakeNode("late", "Relu");  // runs only in the last run (a branch taken once)
  const std::vector<Value> none;
  RunProfile p;
  // Three runs: conv 1, 1, 100 ms (one preempted run); relu 2, 3, 4 ms; late only in run 3.
  const double conv_ms[] = {1, 1, 100};
  const double relu_ms[] = {2, 3, 4};
  for (int r = 0; r < 3; ++r) {
    p.Record(conv, none, conv_ms[r] / 1000);
    p.Record(relu, none, relu_ms[r] / 1000);
    if (r == 2) p.Record(late, none, 0.005);
    p.EndRun();
  }
  EXPECT_EQ(p.runs(), 3);
  EXPECT_EQ(p.median_runs(), 3);
  // Run totals 3, 4, 109 ms: median 4, mean 38.67.
  EXPECT_NEAR(p.median_run_seconds() * 1000, 4, 1e-6);
  EXPECT_NEAR(p.total_seconds() * 1000 / 3, 116.0 / 3, 1e-6);
  const std::vector<RunProfile::NodeTime> nodes = p.Nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes[0].node, "conv");  // slowest by total
  EXPECT_NEAR(nodes[0].median_seconds * 1000, 1, 1e-6);
  EXPECT_EQ(nodes[1].node, "relu");
  EXPECT_NEAR(nodes[1].median_seconds * 1000, 3, 1e-6);
  EXPECT_EQ(nodes[2].node, "late");
  EXPECT_NEAR(nodes[2].median_seconds * 1000, 0, 1e-9);  // 0, 0, 5
  // Per op: Relu's runs are 2, 3, 9 ms (relu + late), median 3; Conv's median 1.
  const std::vector<RunProfile::OpTime> ops = p.Ops();
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].op, "Conv");
  EXPECT_NEAR(ops[0].median_seconds * 1000, 1, 1e-6);
  EXPECT_EQ(ops[1].op, "Relu");
  EXPECT_EQ(ops[1].nodes, 2);
  EXPECT_NEAR(ops[1].median_seconds * 1000, 3, 1e-6);
}

TEST(RunProfile, EvenRunCountTakesTheMiddleTwoAndResetForgetsThem) {
  const Node add = MakeNode("add", "Add");
  const std::vector<Value> none;
  RunProfile p;
  for (double ms : {4.0, 1.0, 3.0, 2.0}) {
    p.Record(add, none, ms / 1000);
    p.EndRun();
  }
  EXPECT_NEAR(p.median_run_seconds() * 1000, 2.5, 1e-6);
  EXPECT_NEAR(p.Nodes()[0].median_seconds * 1000, 2.5, 1e-6);
  p.ResetRuns();  // the warm-up runs are forgotten
  EXPECT_EQ(p.median_runs(), 0);
  EXPECT_EQ(p.median_run_seconds(), 0);
  p.Record(add, none, 0.007);
  p.EndRun();
  EXPECT_NEAR(p.median_run_seconds() * 1000, 7, 1e-6);
  EXPECT_NEAR(p.Nodes()[0].median_seconds * 1000, 7, 1e-6);
}

}  // namespace
}  // namespace onnx_bcast::runtime
