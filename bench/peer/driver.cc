// bench_peer_driver: the C++ side of bench/peer/compare.sh. Reads commands on stdin, one
// per line, and answers each with one line, so the Node.js side can interleave our kernel,
// onnxruntime's and the STREAM-style add sample by sample:
//   prep OP DTYPE A B   allocate inputs/output (shapes like 4x64x256x256, "s" = rank 0),
//                       plan once, and STREAM arrays of the float32 byte volume of the
//                       case: an add (2 reads per write) and one of the case's own mix
//   ours T N BATCH      N samples of BATCH calls of BinaryOp on T threads
//   stream T NT N       N samples of the STREAM add (NT: 1 non-temporal stores, 0 ordinary)
//   matched T NT N      the same for the baseline of the case's read/write mix
//   info                bytes moved by the kernel, by one STREAM add pass, by one matched
//                       pass, and the matched mix (add, scale or fill)
//   quit
// Samples are answered as "ok ns ns ...": nanoseconds per call.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/bench_util.h"
#include "runtime/kernels/binary.h"

namespace onnx_bcast::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::optional<Shape> ParseShape(const std::string& text) {
  Shape shape;
  if (text == "s") return shape;
  for (absl::string_view part : absl::StrSplit(text, 'x')) {
    int64_t d = 0;
    if (!absl::SimpleAtoi(part, &d) || d < 0) return std::nullopt;
    shape.push_back(d);
  }
  return shape;
}

std::optional<runtime::OpKind> ParseOp(const std::string& name) {
  for (runtime::OpKind op : {runtime::OpKind::kAdd, runtime::OpKind::kSub, runtime::OpKind::kMul, runtime::OpKind::kDiv,
                        runtime::OpKind::kMax, runtime::OpKind::kMin, runtime::OpKind::kAnd, runtime::OpKind::kOr,
                        runtime::OpKind::kXor}) {
    if (std::string(runtime::OpKindName(op)) == name) return op;
  }
  return std::nullopt;
}

std::optional<runtime::DType> ParseDType(const std::string& name) {
  for (runtime::DType t : {runtime::DType::kFloat32, runtime::DType::kInt32, runtime::DType::kInt64,
                      runtime::DType::kBool, runtime::DType::kFloat64}) {
    if (std::string(runtime::DTypeName(t)) == name) return t;
  }
  return std::nullopt;
}

struct Case {
  runtime::OpKind op;
  Shape sa, sb;
  runtime::Tensor a, b, out;
  std::unique_ptr<runtime::BroadcastPlan> plan;
  std::unique_ptr<StreamArrays> stream;
  std::unique_ptr<StreamArrays> matched;
  int64_t bytes = 0;
};

template <class F>
std::string Sample(int64_t samples, int64_t batch, F&& fn) {
  std::string line = "ok";
  for (int64_t s = 0; s < samples; ++s) {
    const Clock::time_point t0 = Clock::now();
    for (int64_t k = 0; k < batch; ++k) fn();
    const double ns =
        std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(batch);
    line += " " + std::to_string(ns);
  }
  return line;
}

int Main() {
  std::unique_ptr<Case> c;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    std::string reply;
    if (cmd == "quit") {
      break;
    } else if (cmd == "prep") {
      std::string op, dtype, a, b;
      in >> op >> dtype >> a >> b;
      const auto k = ParseOp(op);
      const auto t = ParseDType(dtype);
      const auto sa = ParseShape(a);
      const auto sb = ParseShape(b);
      if (!k || !t || !sa || !sb) {
        reply = "error bad prep: " + line;
      } else {
        c.reset();  // free the previous case first: the large ones hold ~200 MiB
        c = std::make_unique<Case>();
        c->op = *k;
        c->sa = *sa;
        c->sb = *sb;
        c->a = Filled(*t, *sa);
        c->b = Filled(*t, *sb);
        const Shape so = Broadcast(*sa, *sb);
        c->out = Filled(runtime::BinaryOutputDType(*k, *t), so);
        auto plan = runtime::BroadcastPlan::Create(*sa, *sb, so);
        if (!plan.ok()) {
          reply = "error " + std::string(plan.status().message());
        } else {
          c->plan = std::make_unique<runtime::BroadcastPlan>(*std::move(plan));
          c->bytes = BytesMoved(*sa, *sb, c->a.element_size(), c->out.element_size());
          c->stream = std::make_unique<StreamArrays>(BytesMoved(*sa, *sb, 4, 4));
          c->matched = std::make_unique<StreamArrays>(
              c->bytes, MatchingMix(*sa, *sb, c->a.element_size(), c->out.element_size()));
          reply = "ok " + std::string(runtime::KernelKindName(c->plan->kind()));
        }
      }
    } else if (cmd == "info") {
      reply = c ? "ok " + std::to_string(c->bytes) + " " + std::to_string(c->stream->bytes()) + " " +
                      std::to_string(c->matched->bytes()) + " " + StreamMixName(c->matched->mix)
                : "error no case";
    } else if (cmd == "ours" || cmd == "stream" || cmd == "matched") {
      int64_t threads = 1, x = 0, n = 0;
      in >> threads >> x >> n;
      if (!c || !c->plan) {
        reply = "error no case";
      } else if (cmd == "ours") {
        runtime::BinaryOptions opts;
        opts.threads = static_cast<int>(threads);
        const int64_t samples = x, batch = n < 1 ? 1 : n;
        bool failed = false;
        reply = Sample(samples, batch, [&] {
          failed |= !runtime::BinaryOp(c->op, *c->plan, c->a, c->b, &c->out, opts).ok();
        });
        if (failed) reply = "error BinaryOp failed";
      } else {
        StreamArrays& arrays = cmd == "stream" ? *c->stream : *c->matched;
        reply = Sample(n, 1, [&] { arrays.Run(static_cast<int>(threads), x != 0); });
      }
    } else {
      reply = "error unknown command: " + line;
    }
    std::cout << reply << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace onnx_bcast::bench

int main() { return onnx_bcast::bench::Main(); }
