// The live form oracle on an installed engine (see live_probe.h).
#include "engines/live_probe.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engines/engine_probe.h"
#include "engines/isolated_run.h"
#include "engines/judge.h"
#include "engines/registry.h"
#include "proto/model_io.h"
#include "runtime/exec/error_model.h"
#include "runtime/exec/executor.h"
#include "runtime/exec/load_executor.h"
#include "runtime/exec/model_loader.h"
#include "runtime/exec/random_inputs.h"
#include "support/status_macros.h"

namespace onnx_bcast::engines {
namespace {

// Float constants above this many elements get seeded values (the form decides, not the
// weights).
constexpr int64_t kKeptConstantElements = 64;

uint64_t Fnv1a(std::string_view bytes, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

int64_t Elements(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

// The fragment as it is keyed and run: large float constants replaced by seeded values.
proto::Model Canonical(const proto::Model& fragment) {
  proto::Model c = fragment;
  onnx::GraphProto* g = c.proto.mutable_graph();
  for (int k = 0; k < g->initializer_size(); ++k) {
    onnx::TensorProto* t = g->mutable_initializer(k);
    if (t->data_type() != onnx::TensorProto::FLOAT || Elements(*t) <= kKeptConstantElements) {
      continue;
    }
    absl::StatusOr<runtime::Tensor> values = runtime::RandomTensor(
        runtime::DType::kFloat32, std::vector<int64_t>(t->dims().begin(), t->dims().end()), 101 + k);
    if (!values.ok()) continue;
    t->clear_raw_data();
    t->clear_float_data();
    for (float v : values->values<float>()) t->add_float_data(std::fabs(v) + 0.5f);
  }
  return c;
}

// The fragment with each graph input fed through Relu (float) or Not (bool), and its feeds.
struct Runnable {
  proto::Model model;
  engines::NamedTensors feeds;
  std::vector<std::string> outputs;
};

absl::StatusOr<Runnable> MakeRunnable(const proto::Model& canonical) {
  Runnable r;
  r.model = canonical;
  onnx::GraphProto* g = r.model.proto.mutable_graph();
  std::vector<onnx::NodeProto> front;
  for (int k = 0; k < g->input_size(); ++k) {
    onnx::ValueInfoProto* in = g->mutable_input(k);
    const int32_t elem = in->type().tensor_type().elem_type();
    std::vector<int64_t> dims;
    for (const auto& d : in->type().tensor_type().shape().dim()) dims.push_back(d.dim_value());
    // DType's values are ONNX's element types; the probe models feed only these four.
    const auto dtype = static_cast<runtime::DType>(elem);
    if (dtype != runtime::DType::kFloat32 && dtype != runtime::DType::kBool &&
        dtype != runtime::DType::kInt64 && dtype != runtime::DType::kInt32) {
      return absl::UnimplementedError(absl::StrCat("an input of element type ", elem));
    }
    BCAST_ASSIGN_OR_RETURN(runtime::Tensor t, runtime::RandomTensor(dtype, dims, 1 + k));
    if (dtype == runtime::DType::kFloat32) {
      // Both signs (PRelu's slope, Max/Min, comparisons depend on them), away from zero (no
      // division by a value near it).
      for (float& v : t.values<float>()) v = v >= 0 ? v + 0.5f : v - 0.5f;
    } else if (dtype == runtime::DType::kInt64) {
      for (int64_t& v : t.values<int64_t>()) v = 1 + v % 3;
    } else if (dtype == runtime::DType::kInt32) {
      for (int32_t& v : t.values<int32_t>()) v = 1 + v % 3;
    }
    const std::string name = in->name();
    if (dtype == runtime::DType::kFloat32 || dtype == runtime::DType::kBool) {
      const std::string src = absl::StrCat("src_", name);
      in->set_name(src);
      onnx::NodeProto n;
      // LeakyRelu with alpha 1 passes every value as it is, through a layer of the engine.
      n.set_op_type(dtype == runtime::DType::kBool ? "Not" : "LeakyRelu");
      if (dtype == runtime::DType::kFloat32) {
        onnx::AttributeProto* alpha = n.add_attribute();
        alpha->set_name("alpha");
        alpha->set_type(onnx::AttributeProto::FLOAT);
        alpha->set_f(1.0f);
      }
      n.add_input(src);
      n.add_output(name);
      front.push_back(std::move(n));
      // A Not flips the seeded bools: both sides see the same.
      r.feeds.emplace_back(src, std::move(t));
    } else {
      r.feeds.emplace_back(name, std::move(t));
    }
  }
  if (!front.empty()) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (onnx::NodeProto& n : front) *nodes.Add() = std::move(n);
    for (const onnx::NodeProto& n : g->node()) *nodes.Add() = n;
    g->mutable_node()->Swap(&nodes);
  }
  for (const onnx::ValueInfoProto& o : g->output()) r.outputs.push_back(o.name());
  return r;
}

// An engine without a batch axis (ncnn) takes a graph input of rank 2 or more only with a leading
// 1, which its tools drop, and has no bool tensor. A fragment whose computed operands have that
// leading 1 reaches it as the model's tensors do (the converter sees the same operand shapes,
// the same constants); one whose operand has another leading extent (an intermediate such as
// attention's [heads, T, T]) cannot be fed as the model holds it, so the table decides it
// (FailedPrecondition: the caller falls back).
absl::Status FeedsAsTheModelDoes(const std::string& engine, const Runnable& r) {
  if (!EngineDropsBatchAxis(engine)) return absl::OkStatus();
  for (const auto& [name, t] : r.feeds) {
    if (t.dtype() == runtime::DType::kBool) {
      return absl::FailedPreconditionError(absl::StrCat(engine, " has no bool tensor: operand '",
                                                        name, "' is decided by the table"));
    }
    if (t.rank() >= 2 && t.shape()[0] != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          engine, " has no batch axis: operand '", name, "' [", absl::StrJoin(t.shape(), ","),
          "] cannot be fed as the model holds it; the table decides"));
    }
  }
  return absl::OkStatus();
}

// Our reference on `r` (runtime/exec/error_model.h).
absl::StatusOr<runtime::Reference> Expected(const Runnable& r) {
  runtime::Feeds feeds;
  for (const auto& [n, t] : r.feeds) {
    feeds.emplace_back(n, runtime::Value::Of(std::make_shared<runtime::Tensor>(t.Clone())));
  }
  BCAST_ASSIGN_OR_RETURN(runtime::Reference ref, runtime::ComputeReference(r.model, feeds));
  for (const runtime::OutputReference& o : ref.outputs) {
    if (!o.computed.is_tensor()) return absl::UnimplementedError("not a tensor");
  }
  return ref;
}

targets::LiveVerdict Judge(const engines::EngineOutcome& o, const runtime::Reference& want) {
  const engines::Judgement j = engines::JudgeOutcome(o, want);
  targets::LiveVerdict v;
  switch (j.kind) {
    case engines::JudgementKind::kMatches:
      v.matches = true;
      break;
    case engines::JudgementKind::kWrong:
      v.why = absl::StrCat("runs, but wrong: ", j.why);
      break;
    case engines::JudgementKind::kRefused:
      v.why = absl::StrCat("refused (", o.stage, "): ", o.message);
      break;
    case engines::JudgementKind::kCrashed:
    case engines::JudgementKind::kTimedOut:
      v.why = absl::StrCat(std::string(engines::OutcomeKindName(o.kind)), " (", o.stage,
                           "): ", o.message);
      break;
  }
  return v;
}

}  // namespace

LiveProbe::LiveProbe(engines::EngineFactory make_engine, std::string engine, std::string version,
                     std::string cache_dir)
    : make_engine_(std::move(make_engine)),
      engine_(std::move(engine)),
      version_(std::move(version)),
      cache_dir_(std::move(cache_dir)) {}

std::string LiveProbe::label() const { return absl::StrCat(engine_, " ", version_); }

std::string LiveProbe::Summary() const {
  return absl::StrFormat("%s: %d forms run, %d answered from the cache (%.2f s)", label(),
                         forms_run_, cache_hits_, seconds_);
}

std::vector<absl::StatusOr<targets::LiveVerdict>> LiveProbe::Decide(
    const std::vector<const proto::Model*>& fragments) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<absl::StatusOr<targets::LiveVerdict>> out(
      fragments.size(), absl::StatusOr<targets::LiveVerdict>(targets::LiveVerdict{}));
  struct Pending {
    size_t index;
    std::string key;
    Runnable runnable;
    runtime::Reference expected;
  };
  std::vector<Pending> pending;
  std::map<std::string, size_t> pending_by_key;    // equal forms in one batch run once
  std::vector<std::pair<size_t, size_t>> same_as;  // (fragment, pending)
  const std::string prefix = engine_ + std::string(1, '\0') + version_ + std::string(1, '\0');
  for (size_t i = 0; i < fragments.size(); ++i) {
    const proto::Model canonical = Canonical(*fragments[i]);
    absl::StatusOr<std::string> bytes = proto::SerializeModel(canonical.proto);
    if (!bytes.ok()) {
      out[i] = bytes.status();
      continue;
    }
    std::string key = prefix + *bytes;
    if (auto it = memory_.find(key); it != memory_.end()) {
      out[i] = it->second;
      ++cache_hits_;
      continue;
    }
    if (auto it = pending_by_key.find(key); it != pending_by_key.end()) {
      same_as.emplace_back(i, it->second);
      ++cache_hits_;
      continue;
    }
    const std::string file =
        cache_dir_.empty()
            ? ""
            : absl::StrCat(cache_dir_, "/", engine_, "-", version_, "-",
                           absl::StrFormat("%016x", Fnv1a(key, 14695981039346656037ull)), ".txt");
    const std::string check = absl::StrFormat("%016x", Fnv1a(key, 1469598103934665603ull));
    if (!file.empty()) {
      std::ifstream in(file);
      std::string magic, second, matches, why;
      if (in && std::getline(in, magic) && std::getline(in, second) && std::getline(in, matches) &&
          magic == "bcast-live-probe 3" && second == check) {
        std::getline(in, why);
        targets::LiveVerdict v{matches == "1", why};
        memory_.emplace(key, v);
        out[i] = v;
        ++cache_hits_;
        continue;
      }
    }
    absl::StatusOr<Runnable> runnable = MakeRunnable(canonical);
    if (!runnable.ok()) {
      out[i] = runnable.status();
      continue;
    }
    if (absl::Status feedable = FeedsAsTheModelDoes(engine_, *runnable); !feedable.ok()) {
      out[i] = feedable;
      continue;
    }
    absl::StatusOr<runtime::Reference> expected = Expected(*runnable);
    if (!expected.ok()) {
      out[i] = expected.status();
      continue;
    }
    pending_by_key.emplace(key, pending.size());
    pending.push_back(Pending{i, std::move(key), *std::move(runnable), *std::move(expected)});
  }
  if (!pending.empty()) {
    std::vector<engines::EngineJob> jobs;
    for (const Pending& p : pending) {
      engines::EngineJob job;
      absl::StatusOr<std::string> bytes = proto::SerializeModel(p.runnable.model.proto);
      if (bytes.ok()) job.model_bytes = *std::move(bytes);
      for (const auto& [n, t] : p.runnable.feeds) job.inputs.emplace_back(n, t.Clone());
      job.output_names = p.runnable.outputs;
      jobs.push_back(std::move(job));
    }
    engines::IsolationOptions isolation;
    isolation.parallel = 2;
    isolation.timeout = absl::Seconds(20);
    absl::StatusOr<std::vector<engines::EngineOutcome>> outcomes =
        engines::RunIsolated(make_engine_, jobs, isolation);
    for (size_t k = 0; k < pending.size(); ++k) {
      const Pending& p = pending[k];
      if (!outcomes.ok()) {
        out[p.index] = outcomes.status();
        continue;
      }
      ++forms_run_;
      const targets::LiveVerdict v = Judge((*outcomes)[k], p.expected);
      out[p.index] = v;
      if (!cache_dir_.empty()) {
        const std::string file =
            absl::StrCat(cache_dir_, "/", engine_, "-", version_, "-",
                         absl::StrFormat("%016x", Fnv1a(p.key, 14695981039346656037ull)), ".txt");
        std::error_code ec;
        std::filesystem::create_directories(cache_dir_, ec);
        std::ofstream(file) << "bcast-live-probe 3\n"
                            << absl::StrFormat("%016x", Fnv1a(p.key, 1469598103934665603ull))
                            << "\n"
                            << (v.matches ? "1" : "0") << "\n"
                            << v.why << "\n";
      }
      memory_.emplace(p.key, v);
    }
    for (const auto& [i, k] : same_as) out[i] = out[pending[k].index];
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

absl::StatusOr<std::unique_ptr<LiveProbe>> MakeLiveProbe(const std::string& target_name,
                                                         const std::string& cache_dir) {
  for (const std::string& name : engines::EngineNames()) {
    if (!absl::StartsWith(target_name, name)) continue;
    BCAST_ASSIGN_OR_RETURN(engines::EngineFactory factory, engines::FindEngine(name));
    absl::StatusOr<std::unique_ptr<engines::EngineAdapter>> engine = (factory)();
    if (!engine.ok()) return absl::NotFoundError(std::string(engine.status().message()));
    const std::string version = (*engine)->version();
    engine->reset();
    return std::make_unique<LiveProbe>(factory, name, version, cache_dir);
  }
  return absl::NotFoundError(
      absl::StrCat("no engine adapter of this build runs target '", target_name, "'"));
}

}  // namespace onnx_bcast::engines
