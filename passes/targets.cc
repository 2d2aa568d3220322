// Built-in targets as data, profile files, and conformance of a model to a profile.
#include "passes/targets.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "passes/registry.h"
#include "passes/shape_propagation.h"

namespace onnx_bcast::passes {
namespace {

const std::set<std::string>& KnownClasses() {
  static const auto* const kClasses = new std::set<std::string>{
      "same",    "scalar",        "per-channel",    "inner-axis",   "outer-axis",
      "general", "bidirectional", "unidirectional", "matmul-batch", "legacy-axis"};
  return *kClasses;
}

// Symbols libonnx invents per inference run (unk__N) and the analysis's derived ones
// (bcast(M,N)) do not identify an extent across tensors: they count as unknown dims.
// True when `s` has such a dim or an unknown one.
bool Vague(const bcast::Shape& s) {
  for (const bcast::Dim& d : s.dims) {
    if (d.is_unknown()) return true;
    if (d.is_expr() || (d.is_symbol() && (d.symbol().rfind("unk__", 0) == 0 ||
                                          d.symbol().find('(') != std::string::npos))) {
      return true;
    }
  }
  return false;
}

bool ScalarLike(const bcast::Shape& s) {
  if (!s.rank_known) return false;
  for (const bcast::Dim& d : s.dims) {
    if (!d.Is(1)) return false;
  }
  return true;
}

absl::StatusOr<bool> ParseBool(const std::string& value) {
  if (value == "true" || value == "yes" || value == "1") return true;
  if (value == "false" || value == "no" || value == "0") return false;
  return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not true or false"));
}

std::vector<std::string> ParseList(const std::string& value) {
  std::vector<std::string> items;
  for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
    items.emplace_back(absl::StripAsciiWhitespace(item));
  }
  return items;
}

}  // namespace

bool TargetProfile::Runs(std::string_view broadcast_class) const {
  for (const std::string& c : native_classes) {
    if (c == broadcast_class) return true;
    if (c == "matmul-batch" && broadcast_class.substr(0, 12) == "matmul-batch") return true;
  }
  return false;
}

int64_t TargetProfile::EffectiveRank(const bcast::Shape& shape) const {
  if (!shape.rank_known) return 0;
  int64_t rank = shape.rank();
  if (batch_axis && rank > 0 && (shape.dims[0].Is(1) || shape.dims[0].is_symbol())) --rank;
  return rank;
}

bool TargetProfile::TooHighRank(const bcast::Shape& shape) const {
  return max_rank > 0 && shape.rank_known && shape.rank() > max_rank &&
         EffectiveRank(shape) > max_rank;
}

absl::Span<const TargetProfile> BuiltinTargets() {
  static const auto* const kTargets = new std::vector<TargetProfile>{
      {"explicit",
       "every broadcast between operands of equal rank (leading 1s made explicit)",
       {"upgrade-legacy-broadcast", "align-ranks"},
       {"same", "scalar", "per-channel", "inner-axis", "outer-axis", "general", "bidirectional",
        "unidirectional", "matmul-batch"},
       0,
       false,
       true,
       false},
      {"ncnn",
       "ncnn BinaryOp (seed 001): equal ranks, one side of each pair has the output shape, "
       "rank <= 4 beyond a leading batch of 1",
       {"upgrade-legacy-broadcast", "align-ranks", "legalize-ncnn"},
       {"same", "scalar", "per-channel", "inner-axis", "outer-axis", "general", "unidirectional",
        "matmul-batch"},
       4,
       true,
       true,
       true},
      {"none",
       "no implicit broadcast anywhere: every operand has its op's output shape",
       {"upgrade-legacy-broadcast", "align-ranks", "materialize-broadcast"},
       {"same", "matmul-batch"},
       0,
       false,
       true,
       false},
      {"canonical",
       "the smallest graph that relies on numpy broadcasting",
       {"upgrade-legacy-broadcast", "eliminate-redundant-broadcast"},
       {"same", "scalar", "per-channel", "inner-axis", "outer-axis", "general", "bidirectional",
        "unidirectional", "matmul-batch"},
       0,
       false,
       false,
       false},
  };
  return *kTargets;
}

const TargetProfile* FindTarget(std::string_view name) {
  for (const TargetProfile& t : BuiltinTargets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<TargetProfile> ParseTargetProfile(std::string_view text, const std::string& label) {
  TargetProfile p;
  bool has_passes = false;
  std::set<std::string> seen;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    ++line_no;
    std::string line(raw.substr(0, raw.find('#')));
    absl::StripAsciiWhitespace(&line);
    if (line.empty()) continue;
    auto fail = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrCat(label, ":", line_no, ": ", why));
    };
    const size_t eq = line.find('=');
    if (eq == std::string::npos) return fail("expected 'key = value'");
    std::string key = line.substr(0, eq);
    std::string value = line.substr(eq + 1);
    absl::StripAsciiWhitespace(&key);
    absl::StripAsciiWhitespace(&value);
    if (!seen.insert(key).second) return fail(absl::StrCat("'", key, "' given twice"));
    if (key == "name") {
      p.name = value;
    } else if (key == "description") {
      p.description = value;
    } else if (key == "passes") {
      has_passes = true;
      p.passes = ParseList(value);
      for (const std::string& pass : p.passes) {
        if (FindPass(pass) == nullptr) return fail(absl::StrCat("unknown pass '", pass, "'"));
      }
    } else if (key == "classes") {
      p.native_classes = ParseList(value);
      for (const std::string& c : p.native_classes) {
        if (KnownClasses().count(c) == 0) {
          return fail(absl::StrCat("unknown broadcast class '", c,
                                   "' (known: ", absl::StrJoin(KnownClasses(), ", "), ")"));
        }
      }
    } else if (key == "max_rank") {
      if (!absl::SimpleAtoi(value, &p.max_rank) || p.max_rank < 0) {
        return fail(absl::StrCat("max_rank '", value, "' is not a non-negative integer"));
      }
    } else if (key == "batch_axis" || key == "equal_rank" || key == "scalar_any_rank") {
      absl::StatusOr<bool> b = ParseBool(value);
      if (!b.ok()) return fail(absl::StrCat(key, ": ", b.status().message()));
      (key == "batch_axis"   ? p.batch_axis
       : key == "equal_rank" ? p.equal_rank
                             : p.scalar_any_rank) = *b;
    } else {
      return fail(absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (p.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": no 'name = ...' line"));
  }
  if (p.native_classes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": no 'classes = ...' line"));
  }
  if (!has_passes) {
    p.passes = {"upgrade-legacy-broadcast"};
    if (p.equal_rank) p.passes.push_back("align-ranks");
    p.passes.push_back("legalize");
  }
  return p;
}

absl::StatusOr<TargetProfile> LoadTargetProfile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot read the target file"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseTargetProfile(buffer.str(), path);
}

std::string FormatTargetProfile(const TargetProfile& p) {
  return absl::StrCat("name = ", p.name, "\ndescription = ", p.description,
                      "\npasses = ", absl::StrJoin(p.passes, ", "),
                      "\nclasses = ", absl::StrJoin(p.native_classes, ", "),
                      "\nmax_rank = ", p.max_rank,
                      "\nbatch_axis = ", p.batch_axis ? "true" : "false",
                      "\nequal_rank = ", p.equal_rank ? "true" : "false",
                      "\nscalar_any_rank = ", p.scalar_any_rank ? "true" : "false", "\n");
}

absl::StatusOr<std::vector<std::string>> FindTargetViolations(const proto::Model& model,
                                                              const TargetProfile& p) {
  AnalysisOptions verdicts_only;
  verdicts_only.record_shapes = false;
  absl::StatusOr<Analysis> analysis = AnalyzeBroadcasts(model, verdicts_only);
  if (!analysis.ok()) return analysis.status();
  std::vector<std::string> out;
  for (const NodeVerdict& v : analysis->nodes) {
    if (v.graph != "main" || v.op == "Expand") continue;
    // Texts are built only for a violation: most nodes of a large model conform.
    auto head = [&] { return absl::StrCat(v.op, " '", v.node, "'"); };
    auto shape_text = [&] {
      std::vector<std::string> shapes;
      for (const bcast::Shape& s : v.inputs) shapes.push_back(s.ToString());
      return absl::StrJoin(shapes, " and ");
    };
    if (v.verdict == bcast::Verdict::kError) {
      out.push_back(absl::StrCat(head(), ": broadcast error: ", v.message));
      continue;
    }
    bool known = v.output.rank_known;
    for (const bcast::Shape& s : v.inputs) known &= s.rank_known;
    if (!known) continue;
    std::string cls = v.broadcast_class;
    if (v.rule == bcast::RuleFamily::kNumpy && (cls == "bidirectional" || cls == "general")) {
      // Classes that depend on comparing dims are not decided by invented symbols (checked
      // in place: most nodes have other classes and need no sanitized copies).
      bool vague = Vague(v.output);
      for (const bcast::Shape& s : v.inputs) vague |= Vague(s);
      if (vague) continue;
    }
    if (v.rule == bcast::RuleFamily::kUnidirectional && v.inputs.size() == 2) {
      cls = v.inputs[0] == v.inputs[1] ? "same" : "unidirectional";
    }
    if (!p.Runs(cls)) {
      out.push_back(absl::StrCat(head(), ": ", shape_text(), " broadcast as '", cls, "', which ",
                                 p.name, " does not run natively"));
      continue;
    }
    if (p.equal_rank) {
      bool unequal = false;
      if (v.rule == bcast::RuleFamily::kNumpy) {
        for (const bcast::Shape& s : v.inputs) {
          if (s.rank() != v.output.rank() && !(p.scalar_any_rank && ScalarLike(s))) {
            unequal = true;
          }
        }
      } else if (v.rule == bcast::RuleFamily::kUnidirectional && v.inputs.size() == 2) {
        const bcast::Shape& b = v.op == "Gemm" ? v.inputs[0] : v.inputs[1];
        const bcast::Shape& t = v.op == "Gemm" ? v.inputs[1] : v.inputs[0];
        unequal = b.rank() != t.rank() && !(p.scalar_any_rank && ScalarLike(b));
      } else if (v.rule == bcast::RuleFamily::kMatMul && v.inputs.size() == 2) {
        unequal = v.inputs[0].rank() >= 2 && v.inputs[1].rank() >= 2 &&
                  v.inputs[0].rank() != v.inputs[1].rank();
      }
      if (unequal) {
        out.push_back(absl::StrCat(head(), ": operands ", shape_text(), " have different ranks; ",
                                   p.name, " needs equal ranks"));
        continue;
      }
    }
    bool too_high = p.TooHighRank(v.output);
    for (const bcast::Shape& s : v.inputs) too_high |= p.TooHighRank(s);
    if (too_high) {
      out.push_back(absl::StrCat(head(), ": ", shape_text(), " -> ", v.output.ToString(),
                                 " exceeds ", p.name, "'s maximum rank ", p.max_rank));
    }
  }
  return out;
}

}  // namespace onnx_bcast::passes
