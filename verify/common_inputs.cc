// What both models of a verification accept (see common_inputs.h).
#include "verify/common_inputs.h"

#include <set>
#include <unordered_set>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnx_bcast::verify {
namespace {

// Payloads that tell the CLI's exit codes apart without guessing from a status code the
// executor may also use.
constexpr char kUsagePayload[] = "onnx-bcast/verify/usage";
constexpr char kBadInputPayload[] = "onnx-bcast/verify/bad-input";

// One declared dim of a graph input: a number, or the symbol it stands for (its dim_param, or
// "<input>:<axis>" when unnamed, as proto/dim_binding.h names it).
struct DeclaredDim {
  int64_t value = -1;
  std::string symbol;
};

struct DeclaredInput {
  std::string name;
  bool shaped = false;
  std::vector<DeclaredDim> dims;
};

std::vector<DeclaredInput> DeclaredInputs(const onnx::GraphProto& g) {
  std::unordered_set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  std::vector<DeclaredInput> out;
  for (const onnx::ValueInfoProto& vi : g.input()) {
    if (inits.count(vi.name()) > 0) continue;  // a weight with a default, not an input
    DeclaredInput in;
    in.name = vi.name();
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) {
      in.shaped = true;
      const auto& shape = vi.type().tensor_type().shape();
      for (int axis = 0; axis < shape.dim_size(); ++axis) {
        const auto& d = shape.dim(axis);
        DeclaredDim dim;
        if (d.has_dim_value()) {
          dim.value = d.dim_value();
        } else {
          dim.symbol = d.has_dim_param() ? d.dim_param() : absl::StrCat(vi.name(), ":", axis);
        }
        in.dims.push_back(std::move(dim));
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

void AddSymbols(const std::vector<DeclaredInput>& inputs, std::set<std::string>* symbols) {
  for (const DeclaredInput& in : inputs) {
    for (const DeclaredDim& d : in.dims) {
      if (d.value < 0) symbols->insert(d.symbol);
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<BoundDim>> CommonInputBindings(
    const proto::Model& original, const proto::Model& rewritten,
    const std::map<std::string, int64_t>& explicit_dims, const std::string& dims_label) {
  const std::vector<DeclaredInput> ins_a = DeclaredInputs(original.proto.graph());
  const std::vector<DeclaredInput> ins_b = DeclaredInputs(rewritten.proto.graph());
  std::set<std::string> symbols;
  AddSymbols(ins_a, &symbols);
  AddSymbols(ins_b, &symbols);

  struct Pin {
    BoundDim bound;
    std::string where;  // "input 'x' axis 0", empty for an explicit binding
  };
  std::map<std::string, Pin> pins;
  for (const auto& [symbol, value] : explicit_dims) {
    if (symbols.count(symbol) == 0) {
      return UsageError(
          absl::StrCat(dims_label, " ", symbol, ": neither model's inputs have a symbol '", symbol,
                       "' (they have ",
                       symbols.empty() ? std::string("none") : absl::StrJoin(symbols, ", "), ")"));
    }
    if (value < 1) {
      return UsageError(
          absl::StrCat(dims_label, " ", symbol, "=", value, ": symbolic dims are extents >= 1"));
    }
    pins[symbol] = Pin{BoundDim{symbol, value, dims_label}, ""};
  }
  // `symbol` of one model meets `value` declared by the other at `where`.
  auto pin = [&](const std::string& symbol, int64_t value, const std::string& by,
                 const std::string& where) -> absl::Status {
    auto it = pins.find(symbol);
    if (it == pins.end()) {
      pins[symbol] = Pin{BoundDim{symbol, value, by}, where};
      return absl::OkStatus();
    }
    const Pin& old = it->second;
    if (old.bound.value == value) return absl::OkStatus();
    if (old.where.empty()) {
      return UsageError(absl::StrCat(dims_label, " ", symbol, "=", old.bound.value, ": ", by,
                                     " accepts only ", symbol, "=", value, " (", where, ")"));
    }
    return UsageError(absl::StrCat("the two models accept no common input: ", symbol, " is ",
                                   old.bound.value, " in ", old.bound.by, " (", old.where, ") and ",
                                   value, " in ", by, " (", where, ")"));
  };
  for (const DeclaredInput& a : ins_a) {
    const DeclaredInput* b = nullptr;
    for (const DeclaredInput& candidate : ins_b) {
      if (candidate.name == a.name) b = &candidate;
    }
    if (b == nullptr || !a.shaped || !b->shaped) continue;
    if (a.dims.size() != b->dims.size()) {
      return UsageError(absl::StrCat("the two models accept no common input: input '", a.name,
                                     "' has rank ", a.dims.size(), " in the original model and ",
                                     b->dims.size(), " in the rewritten model"));
    }
    for (size_t axis = 0; axis < a.dims.size(); ++axis) {
      const DeclaredDim& da = a.dims[axis];
      const DeclaredDim& db = b->dims[axis];
      const std::string where = absl::StrCat("input '", a.name, "' axis ", axis);
      if (da.value >= 0 && db.value >= 0) {
        if (da.value != db.value) {
          return UsageError(absl::StrCat("the two models accept no common input: ", where, " is ",
                                         da.value, " in the original model and ", db.value,
                                         " in the rewritten model"));
        }
      } else if (da.value < 0 && db.value >= 0) {
        if (absl::Status s = pin(da.symbol, db.value, "the rewritten model", where); !s.ok()) {
          return s;
        }
      } else if (da.value >= 0 && db.value < 0) {
        if (absl::Status s = pin(db.symbol, da.value, "the original model", where); !s.ok()) {
          return s;
        }
      }
    }
  }
  std::vector<BoundDim> out;
  for (auto& [symbol, p] : pins) out.push_back(std::move(p.bound));
  return out;
}

std::map<std::string, int64_t> BoundValues(const std::vector<BoundDim>& bound) {
  std::map<std::string, int64_t> values;
  for (const BoundDim& b : bound) values[b.symbol] = b.value;
  return values;
}

std::string BoundDimsToString(const std::vector<BoundDim>& bound) {
  std::vector<std::string> parts;
  for (const BoundDim& b : bound) {
    parts.push_back(absl::StrCat(b.symbol, " bound to ", b.value, " by ", b.by));
  }
  return absl::StrJoin(parts, ", ");
}

absl::Status UsageError(std::string message) {
  absl::Status s = absl::InvalidArgumentError(std::move(message));
  s.SetPayload(kUsagePayload, absl::Cord("1"));
  return s;
}

absl::Status BadInputError(const absl::Status& status) {
  absl::Status s = absl::InvalidArgumentError(status.message());
  s.SetPayload(kBadInputPayload, absl::Cord("1"));
  return s;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

bool IsBadInputError(const absl::Status& status) {
  return status.GetPayload(kBadInputPayload).has_value();
}

}  // namespace onnx_bcast::verify
