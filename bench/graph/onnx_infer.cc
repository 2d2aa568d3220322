// bench_graph_onnx_infer: the peer figure for the whole-graph benchmarks: libonnx's C++
// shape inference (onnx::shape_inference::InferShapes, the function Python's
// onnx.shape_inference.infer_shapes calls) on a model file, timed alone: the parse and a fresh
// copy of the model before each run are outside the timed region.
//
// Usage: bench_graph_onnx_infer MODEL.onnx [REPEATS]
// Prints one JSON line: {"nodes": N, "parse_s": ..., "infer_s": [wall per run],
// "infer_cpu_s": [process CPU per run]}.
#include <time.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_graph_onnx_infer MODEL.onnx [REPEATS]\n");
    return 64;
  }
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 1;
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded)) {
    std::fprintf(stderr, "%s: cannot parse\n", argv[1]);
    return 1;
  }
  const double parse_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("{\"nodes\": %d, \"parse_s\": %.6f, \"infer_s\": [", model.graph().node_size(),
              parse_s);
  std::string cpu_list;
  auto cpu_now = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  };
  for (int r = 0; r < repeats; ++r) {
    onnx::ModelProto copy = model;
    const auto start = Clock::now();
    const double cpu_start = cpu_now();
    try {
      // The options onnx-bcast uses for its analysis (no type check, not strict).
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0);
      onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: shape inference failed: %s\n", argv[1], e.what());
      return 1;
    }
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("%s%.6f", r == 0 ? "" : ", ", s);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.6f", r == 0 ? "" : ", ", cpu_now() - cpu_start);
    cpu_list += buf;
  }
  std::printf("], \"infer_cpu_s\": [%s]}\n", cpu_list.c_str());
  return 0;
}
