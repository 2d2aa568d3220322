// Built-in targets as data, profile files, and conformance of a model to a profile.
#include "targets/targets.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analysis/shape_propagation.h"
#include "proto/graph_structure.h"
#include "proto/model_io.h"
#include "proto/opsets.h"
#include "proto/shapes.h"
#include "targets/form_oracle.h"
#include "targets/runtime_shapes.h"
#include "targets/shape_cells.h"

namespace onnx_bcast::targets {

using Class = broadcast::BroadcastClass;
namespace {

const std::set<std::string>& KnownClasses() {
  static const auto* const kClasses = new std::set<std::string>{
      "same",    "scalar",        "per-channel",    "inner-axis",   "outer-axis",
      "general", "bidirectional", "unidirectional", "matmul-batch", "legacy-axis"};
  return *kClasses;
}

// A symbol the analysis derives for an undecided broadcast (bcast(M,N)) does not identify an
// extent across tensors. Every other symbol does, whatever its name: libonnx's own inventions
// (unk__N) never reach the tables (the analysis reads them as unknown dims), so an unk__N here
// is the model's declaration (tf2onnx names its dynamic dims so), and `check` compares it as
// any symbol: the target check must decide the node the same way.
bool ReliableSymbol(const std::string& name) { return name.find('(') == std::string::npos; }

// True when `d` identifies an extent that compares reliably with another dim: a number, a
// symbol, or a dim expression over such symbols (expressions are canonical, so equal extents
// compare equal: `2*ceil(H/16)` is as good as `H`).
bool Reliable(const broadcast::Dim& d) {
  if (d.is_value()) return true;
  if (d.is_unknown()) return false;
  if (d.is_symbol()) return ReliableSymbol(d.symbol());
  const std::optional<broadcast::Expr> e = d.expr();
  if (!e) return false;
  for (const std::string& sym : e->Symbols()) {
    if (!ReliableSymbol(sym)) return false;
  }
  return true;
}

// True when `s` has a dim that is not Reliable.
bool Vague(const broadcast::Shape& s) {
  for (const broadcast::Dim& d : s.dims) {
    if (!Reliable(d)) return true;
  }
  return false;
}

bool ScalarLike(const broadcast::Shape& s) {
  if (!s.rank_known) return false;
  for (const broadcast::Dim& d : s.dims) {
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

// The numpy classes a form class names (matmul-batch:<class> included).
bool KnownFormClass(std::string c) {
  // "<class>@<rank>": the entry for outputs of that rank only.
  if (const size_t at = c.find('@'); at != std::string::npos) {
    int64_t rank = 0;
    if (!absl::SimpleAtoi(c.substr(at + 1), &rank) || rank < 0 || rank > 64) return false;
    c.resize(at);
  }
  static const auto* const kNumpy = new std::set<std::string>{
      "same", "scalar", "per-channel", "inner-axis", "outer-axis", "general", "bidirectional"};
  if (kNumpy->count(c) > 0 || c == "matmul-batch") return true;
  const std::string prefix = "matmul-batch:";
  return c.rfind(prefix, 0) == 0 && kNumpy->count(c.substr(prefix.size())) > 0;
}

// "computed", or "constant_" and strictly increasing letters.
bool ValidKindPattern(const std::string& p) {
  if (p == "computed") return true;
  const std::string prefix = "constant_";
  if (p.rfind(prefix, 0) != 0 || p.size() == prefix.size()) return false;
  char last = 0;
  for (char c : p.substr(prefix.size())) {
    if (c < 'a' || c > 'z' || c <= last) return false;
    last = c;
  }
  return true;
}

// One `op.<Op>.<pattern>` value: "same, scalar, inner-axis:aligned, general:refused".
absl::StatusOr<std::map<std::string, FormSupport>> ParseForms(const std::string& value) {
  std::map<std::string, FormSupport> forms;
  for (const std::string& item : ParseList(value)) {
    const size_t colon = item.find(':', item.rfind("matmul-batch:", 0) == 0 ? 13 : 0);
    std::string cls = item.substr(0, colon);
    std::string support = colon == std::string::npos ? "runs" : item.substr(colon + 1);
    absl::StripAsciiWhitespace(&cls);
    absl::StripAsciiWhitespace(&support);
    if (!KnownFormClass(cls)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown form class '", cls,
          "' (a numpy class: same, scalar, per-channel, inner-axis, outer-axis, general, "
          "bidirectional; or matmul-batch:<class>)"));
    }
    std::optional<FormSupport> s;
    for (FormSupport f : {FormSupport::kRuns, FormSupport::kRunsAligned,
                          FormSupport::kRunsUnaligned, FormSupport::kRunsFirstFull,
                          FormSupport::kRefused, FormSupport::kWrong, FormSupport::kCrashed}) {
      if (FormSupportName(f) == support) s = f;
    }
    if (!s) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", item, "': '", support,
                       "' is not one of aligned, unaligned, first-full, refused, wrong, crashed "
                       "(nothing: "
                       "runs)"));
    }
    if (!forms.emplace(cls, *s).second) {
      return absl::InvalidArgumentError(absl::StrCat("form class '", cls, "' given twice"));
    }
  }
  return forms;
}

}  // namespace

std::string_view FormSupportName(FormSupport support) {
  switch (support) {
    case FormSupport::kRuns:
      return "runs";
    case FormSupport::kRunsAligned:
      return "aligned";
    case FormSupport::kRunsUnaligned:
      return "unaligned";
    case FormSupport::kRunsFirstFull:
      return "first-full";
    case FormSupport::kRefused:
      return "refused";
    case FormSupport::kWrong:
      return "wrong";
    case FormSupport::kCrashed:
      return "crashed";
  }
  return "?";
}

std::string OperandKindPattern(const analysis::NodeVerdict& v,
                               const std::function<bool(const std::string&)>& is_constant) {
  std::string letters;
  // Gemm's second operand is (M,N), the product of A and B: computed whatever A and B are.
  const size_t n =
      v.op == "Gemm" ? std::min<size_t>(1, v.input_names.size()) : v.input_names.size();
  for (size_t k = 0; k < n && k < 26; ++k) {
    if (!v.input_names[k].empty() && is_constant(v.input_names[k])) {
      letters.push_back(static_cast<char>('a' + k));
    }
  }
  return letters.empty() ? "computed" : absl::StrCat("constant_", letters);
}

std::string FormClass(const analysis::NodeVerdict& v) {
  if (v.verdict == broadcast::Verdict::kError) return "";
  if (v.op == "Expand") {
    // Its input against the target: which axes an engine must replicate.
    if (v.inputs.empty() || !v.inputs[0].rank_known || !v.output.rank_known) return "";
    if (v.inputs[0] == v.output) return "same";
    const broadcast::Shape both[] = {v.output, v.inputs[0]};
    const broadcast::BroadcastClass cls = broadcast::Classify(both, v.output);
    // Engines replicate one axis at a time (an importer may take only one): an Expand along
    // several axes is `general`, whatever the pattern of its 1s.
    const int64_t lead = v.output.rank() - v.inputs[0].rank();
    int axes = 0;
    for (int64_t k = 0; k < v.output.rank(); ++k) {
      const bool one = k < lead || v.inputs[0].dims[static_cast<size_t>(k - lead)].Is(1);
      axes += one && !v.output.dims[static_cast<size_t>(k)].Is(1);
    }
    if (axes > 1 && cls != broadcast::BroadcastClass::kScalar) return "general";
    return std::string(broadcast::BroadcastClassName(cls));
  }
  switch (v.rule) {
    case broadcast::RuleFamily::kNumpy:
    case broadcast::RuleFamily::kMatMul:
      return analysis::BroadcastClassText(v);
    case broadcast::RuleFamily::kUnidirectional: {
      if (v.inputs.size() != 2) return "";
      // check's order: (X, slope) for PRelu, (C, (M,N)) for Gemm.
      const broadcast::Shape& b = v.op == "Gemm" ? v.inputs[0] : v.inputs[1];
      const broadcast::Shape& target = v.op == "Gemm" ? v.inputs[1] : v.inputs[0];
      const broadcast::Shape both[] = {target, b};
      return std::string(broadcast::BroadcastClassName(broadcast::Classify(both, target)));
    }
    default:
      return "";
  }
}

bool OperandsAligned(const analysis::NodeVerdict& v) {
  if (v.op == "Expand") {
    return !v.inputs.empty() && v.inputs[0].rank_known && v.output.rank_known &&
           v.inputs[0].rank() == v.output.rank();
  }
  if (v.rule == broadcast::RuleFamily::kMatMul) {
    return v.inputs.size() != 2 || v.inputs[0].rank() < 2 || v.inputs[1].rank() < 2 ||
           v.inputs[0].rank() == v.inputs[1].rank();
  }
  for (const broadcast::Shape& s : v.inputs) {
    if (!s.rank_known || s.rank() != v.inputs[0].rank()) return false;
  }
  return true;
}

bool ConstantsBelowOutputRank(const analysis::NodeVerdict& v,
                              const std::function<bool(const std::string&)>& is_constant) {
  if (!v.output.rank_known) return false;
  // Gemm's C is compared with (M,N), which is rank 2 whatever A and B are.
  const int64_t out_rank = v.op == "Gemm" ? 2 : v.output.rank();
  // Gemm's C and Expand's input are the broadcast operands (not (M,N), not the shape).
  const size_t n = v.op == "Gemm" || v.op == "Expand" ? std::min<size_t>(1, v.input_names.size())
                                                      : v.input_names.size();
  bool any = false;
  for (size_t k = 0; k < n && k < v.inputs.size(); ++k) {
    if (v.input_names[k].empty() || !is_constant(v.input_names[k])) continue;
    if (!v.inputs[k].rank_known || v.inputs[k].rank() >= out_rank) return false;
    any = true;
  }
  return any;
}

bool FirstOperandFull(const analysis::NodeVerdict& v) {
  return !v.inputs.empty() && v.output.rank_known && v.inputs[0] == v.output;
}

bool TargetProfile::Runs(broadcast::BroadcastClass broadcast_class) const {
  return Runs(broadcast::BroadcastClassName(broadcast_class));
}

bool TargetProfile::Runs(std::string_view broadcast_class) const {
  for (const std::string& c : native_classes) {
    if (c == broadcast_class) return true;
    if (c == "matmul-batch" && broadcast_class.substr(0, 12) == "matmul-batch") return true;
  }
  return false;
}

int64_t TargetProfile::EffectiveRank(const broadcast::Shape& shape) const {
  if (!shape.rank_known) return 0;
  int64_t rank = shape.rank();
  if (batch_axis && rank > 0 && (shape.dims[0].Is(1) || shape.dims[0].is_symbolic())) --rank;
  return rank;
}

namespace {

// ONNX TensorProto.DataType values and the profile's names for them.
constexpr std::pair<int32_t, const char*> kElementTypes[] = {
    {1, "float32"},  {2, "uint8"},   {3, "int8"},    {4, "uint16"},   {5, "int16"},
    {6, "int32"},    {7, "int64"},   {8, "string"},  {9, "bool"},     {10, "float16"},
    {11, "float64"}, {12, "uint32"}, {13, "uint64"}, {16, "bfloat16"}};

bool KnownElementType(const std::string& name) {
  for (const auto& [code, n] : kElementTypes) {
    if (name == n) return true;
  }
  return false;
}

}  // namespace

std::string ElementTypeName(int32_t data_type) {
  for (const auto& [code, name] : kElementTypes) {
    if (code == data_type) return name;
  }
  return absl::StrCat("type ", data_type);
}

bool TargetProfile::InitializerTypeAllowed(int32_t data_type) const {
  if (initializer_types.empty()) return true;
  const std::string name = ElementTypeName(data_type);
  return std::find(initializer_types.begin(), initializer_types.end(), name) !=
         initializer_types.end();
}

bool TargetProfile::TooHighRank(const broadcast::Shape& shape) const {
  return max_rank > 0 && shape.rank_known && shape.rank() > max_rank &&
         EffectiveRank(shape) > max_rank;
}

namespace {

TargetProfile Builtin(std::string name, std::string description, std::vector<std::string> passes,
                      std::vector<std::string> classes, int64_t max_rank, bool batch_axis,
                      bool equal_rank, bool scalar_any_rank) {
  TargetProfile p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.passes = std::move(passes);
  p.native_classes = std::move(classes);
  p.max_rank = max_rank;
  p.batch_axis = batch_axis;
  p.equal_rank = equal_rank;
  p.scalar_any_rank = scalar_any_rank;
  return p;
}

// A measured profile of engines/profiles/ as the build embeds it (targets/CMakeLists.txt finds
// the files): the file's name and its text.
struct EmbeddedProfile {
  const char* file;
  const char* text;
};

constexpr EmbeddedProfile kEmbeddedProfiles[] = {
#include "targets/builtin_profiles.inc"
    {nullptr, nullptr}};

// The order the built-in targets are listed in (engines/profiles/builtin_order.txt; may be
// empty): a target it does not name follows those it names, in its own order.
constexpr const char* kBuiltinOrder[] = {
#include "targets/builtin_order.inc"
    nullptr};

// `targets` ordered by kBuiltinOrder, the rest after in their order.
std::vector<TargetProfile> InBuiltinOrder(std::vector<TargetProfile> targets) {
  std::vector<TargetProfile> ordered;
  for (const char* const* name = kBuiltinOrder; *name != nullptr; ++name) {
    for (TargetProfile& t : targets) {
      if (!t.name.empty() && t.name == *name) {
        ordered.push_back(std::move(t));
        t.name.clear();  // taken
      }
    }
  }
  for (TargetProfile& t : targets) {
    if (!t.name.empty()) ordered.push_back(std::move(t));
  }
  return ordered;
}

}  // namespace

absl::StatusOr<TargetProfile> ProfileTarget(std::string_view file_name, std::string_view text) {
  absl::StatusOr<TargetProfile> p = ParseTargetProfile(
      text, absl::StrCat("engines/profiles/", std::string(file_name), " (built in)"));
  if (!p.ok()) return p.status();
  const std::string_view stem = file_name.substr(0, file_name.find('.'));
  p->name = std::string(stem.substr(0, stem.find('-')));
  return p;
}

absl::Span<const TargetProfile> BuiltinTargets() {
  static const auto* const kTargets = [] {
    std::vector<TargetProfile> targets{
        Builtin("explicit",
                "every broadcast between operands of equal rank (leading 1s made explicit)",
                {"upgrade-legacy-broadcast", "align-ranks"},
                {"same", "scalar", "per-channel", "inner-axis", "outer-axis", "general",
                 "bidirectional", "unidirectional", "matmul-batch"},
                0, false, true, false),
        Builtin("none", "no implicit broadcast anywhere: every operand has its op's output shape",
                {"upgrade-legacy-broadcast", "align-ranks", "materialize-broadcast"},
                {"same", "matmul-batch"}, 0, false, true, false),
        Builtin("canonical", "the smallest graph that relies on numpy broadcasting",
                {"upgrade-legacy-broadcast", "eliminate-redundant-broadcast"},
                {"same", "scalar", "per-channel", "inner-axis", "outer-axis", "general",
                 "bidirectional", "unidirectional", "matmul-batch"},
                0, false, false, false),
    };
    // The engines' measured tables. A profile that does not parse is a build error in spirit;
    // targets_test parses the files themselves and names the line, so here the target is only
    // left out. Of two profiles of one engine, the later file name (the later version or
    // date) is the target.
    for (const EmbeddedProfile* e = kEmbeddedProfiles; e->file != nullptr; ++e) {
      absl::StatusOr<TargetProfile> p = ProfileTarget(e->file, e->text);
      if (!p.ok()) continue;
      auto same = std::find_if(targets.begin(), targets.end(),
                               [&p](const TargetProfile& t) { return t.name == p->name; });
      if (same != targets.end()) {
        *same = *std::move(p);
      } else {
        targets.push_back(*std::move(p));
      }
    }
    return new std::vector<TargetProfile>(InBuiltinOrder(std::move(targets)));
  }();
  return *kTargets;
}

const TargetProfile* FindTarget(std::string_view name) {
  for (const TargetProfile& t : BuiltinTargets()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

absl::StatusOr<TargetProfile> ParseTargetProfile(std::string_view text, const std::string& label,
                                                 PassNameCheck is_pass) {
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
    if (key.rfind("op.", 0) == 0) {
      // op.<Op>.max_rank or op.<Op>.<operand kinds>
      const size_t dot = key.find('.', 3);
      const std::string op = key.substr(3, dot == std::string::npos ? dot : dot - 3);
      const std::string part = dot == std::string::npos ? "" : key.substr(dot + 1);
      if (op.empty() || part.empty()) {
        return fail(absl::StrCat("'", key,
                                 "': expected op.<Op>.min_rank, op.<Op>.max_rank or "
                                 "op.<Op>.<kinds>"));
      }
      if (!analysis::IsBroadcastingOp(op)) {
        return fail(absl::StrCat("'", key, "': '", op, "' is not a broadcasting op"));
      }
      OpRule& rule = p.op_rules[op];
      if (part == "max_rank" || part == "min_rank") {
        int64_t& limit = part == "max_rank" ? rule.max_rank : rule.min_rank;
        if (!absl::SimpleAtoi(value, &limit) || limit < 0) {
          return fail(absl::StrCat(key, " '", value, "' is not a non-negative integer"));
        }
      } else if (absl::EndsWith(part, ".shapes") &&
                 ValidKindPattern(part.substr(0, part.size() - 7))) {
        absl::StatusOr<std::vector<ShapeCell>> cells = ParseShapeCells(value);
        if (!cells.ok()) return fail(absl::StrCat(key, ": ", cells.status().message()));
        rule.shape_cells[part.substr(0, part.size() - 7)] = *std::move(cells);
      } else if (ValidKindPattern(part)) {
        absl::StatusOr<std::map<std::string, FormSupport>> forms = ParseForms(value);
        if (!forms.ok()) return fail(absl::StrCat(key, ": ", forms.status().message()));
        rule.forms[part] = *std::move(forms);
      } else {
        return fail(
            absl::StrCat("'", key, "': '", part,
                         "' is neither min_rank, max_rank nor an operand-kind pattern (computed, "
                         "constant_a, constant_b, constant_ab, ...), optionally followed by "
                         "'.shapes'"));
      }
      continue;
    }
    if (key == "name") {
      p.name = value;
    } else if (key == "description") {
      p.description = value;
    } else if (key == "passes") {
      has_passes = true;
      p.passes = ParseList(value);
      for (const std::string& pass : p.passes) {
        if (is_pass != nullptr && !is_pass(pass)) {
          return fail(absl::StrCat("unknown pass '", pass, "'"));
        }
      }
    } else if (key == "classes") {
      p.native_classes = ParseList(value);
      for (const std::string& c : p.native_classes) {
        if (KnownClasses().count(c) == 0) {
          return fail(absl::StrCat("unknown broadcast class '", c,
                                   "' (known: ", absl::StrJoin(KnownClasses(), ", "), ")"));
        }
      }
    } else if (key == "initializer_types") {
      p.initializer_types = ParseList(value);
      for (const std::string& t : p.initializer_types) {
        if (!KnownElementType(t)) {
          return fail(absl::StrCat("unknown element type '", t,
                                   "' (float32, float16, float64, int8 ... int64, uint8 ... "
                                   "uint64, bool, string, bfloat16)"));
        }
      }
    } else if (key == "unsupported_ops") {
      p.unsupported_ops = ParseList(value);
    } else if (key == "max_rank") {
      if (!absl::SimpleAtoi(value, &p.max_rank) || p.max_rank < 0) {
        return fail(absl::StrCat("max_rank '", value, "' is not a non-negative integer"));
      }
    } else if (key == "batch_axis" || key == "equal_rank" || key == "scalar_any_rank" ||
               key == "runtime_shapes") {
      absl::StatusOr<bool> b = ParseBool(value);
      if (!b.ok()) return fail(absl::StrCat(key, ": ", b.status().message()));
      (key == "batch_axis"       ? p.batch_axis
       : key == "equal_rank"     ? p.equal_rank
       : key == "runtime_shapes" ? p.runtime_shapes
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
    p.passes.push_back("legalize-measured");
  }
  return p;
}

absl::StatusOr<TargetProfile> LoadTargetProfile(const std::string& path, PassNameCheck is_pass) {
  absl::StatusOr<std::string> text = proto::ReadFileBytes(path, int64_t{1} << 20);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat(text.status().message(), " (the target file)"));
  }
  return ParseTargetProfile(*text, path, is_pass);
}

namespace {

std::string FormatOpRules(const std::map<std::string, OpRule>& rules) {
  std::string out;
  for (const auto& [op, rule] : rules) {
    if (rule.min_rank > 0) absl::StrAppend(&out, "op.", op, ".min_rank = ", rule.min_rank, "\n");
    if (rule.max_rank > 0) absl::StrAppend(&out, "op.", op, ".max_rank = ", rule.max_rank, "\n");
    for (const auto& [pattern, forms] : rule.forms) {
      std::vector<std::string> items;
      for (const auto& [cls, support] : forms) {
        items.push_back(support == FormSupport::kRuns
                            ? cls
                            : absl::StrCat(cls, ":", std::string(FormSupportName(support))));
      }
      absl::StrAppend(&out, "op.", op, ".", pattern, " = ", absl::StrJoin(items, ", "), "\n");
    }
    for (const auto& [pattern, cells] : rule.shape_cells) {
      if (cells.empty()) continue;
      absl::StrAppend(&out, "op.", op, ".", pattern, ".shapes = ", FormatShapeCells(cells), "\n");
    }
  }
  return out;
}

}  // namespace

std::string FormatTargetProfile(const TargetProfile& p) {
  return absl::StrCat(
      "name = ", p.name, "\ndescription = ", p.description,
      "\npasses = ", absl::StrJoin(p.passes, ", "),
      "\nclasses = ", absl::StrJoin(p.native_classes, ", "), "\nmax_rank = ", p.max_rank,
      "\nbatch_axis = ", p.batch_axis ? "true" : "false",
      "\nequal_rank = ", p.equal_rank ? "true" : "false",
      "\nscalar_any_rank = ", p.scalar_any_rank ? "true" : "false",
      "\nruntime_shapes = ", p.runtime_shapes ? "true" : "false", "\n",
      p.initializer_types.empty()
          ? ""
          : absl::StrCat("initializer_types = ", absl::StrJoin(p.initializer_types, ", "), "\n"),
      p.unsupported_ops.empty()
          ? ""
          : absl::StrCat("unsupported_ops = ", absl::StrJoin(p.unsupported_ops, ", "), "\n"),
      FormatOpRules(p.op_rules));
}

std::string TargetViolation::ToString() const {
  return absl::StrCat(graph, ": ", op, " '", node, "': ", shapes, ": ", why);
}

namespace {

// True when every other operand provably broadcasts to `x` unchanged at each aligned axis:
// its dim there is 1 or reliably equal to x's (so `x` has the output shape and the pair is
// not bidirectional), whatever values x's own vague dims take.
bool Dominates(const broadcast::Shape& x, absl::Span<const broadcast::Shape> all,
               const broadcast::Shape& output) {
  // An operand whose every dim is the output's (the analysis states a conditional broadcast's
  // output as max(a, b)) has the output shape wherever the broadcast is valid.
  if (output.rank_known && x == output && !Vague(x)) return true;
  for (const broadcast::Shape& o : all) {
    if (&o == &x) continue;
    if (o.rank() > x.rank()) return false;
    const int64_t off = x.rank() - o.rank();
    for (int64_t k = 0; k < o.rank(); ++k) {
      const broadcast::Dim& od = o.dims[static_cast<size_t>(k)];
      const broadcast::Dim& xd = x.dims[static_cast<size_t>(k + off)];
      if (od.Is(1)) continue;
      if (!(Reliable(od) && od == xd)) return false;
    }
  }
  return true;
}

// What the profile says the engine does with a form it does not run, for messages.
std::string Measured(FormSupport s) {
  switch (s) {
    case FormSupport::kRefused:
      return "refuses";
    case FormSupport::kWrong:
      return "computes wrongly";
    case FormSupport::kCrashed:
      return "crashes on";
    default:
      return "runs";
  }
}

// `d` refused for `why`; `cannot_prove`: for want of a shape, not a measured refusal.
FormDecision Refused(FormDecision d, std::string why, bool cannot_prove = false) {
  d.fits = false;
  d.why = std::move(why);
  d.cannot_prove = cannot_prove;
  return d;
}

// What an op's measured rule (its rank limits and the forms measured for these operand kinds,
// `forms` when the profile lists that pattern) says of node `v`, after the global keys.
FormDecision DecideOpRuleForm(const analysis::NodeVerdict& v, const TargetProfile& p, const OpRule& op_rule,
                              const std::map<std::string, FormSupport>* forms,
                              const std::string& pattern,
                              const std::function<bool(const std::string&)>& is_constant) {
  if (op_rule.max_rank > 0 && v.output.rank_known && v.output.rank() > op_rule.max_rank) {
    return Refused({},
                   absl::StrCat("-> ", v.output.ToString(), " exceeds ", p.name, "'s maximum rank ",
                                op_rule.max_rank, " for ", v.op, " (op.", v.op, ".max_rank)"));
  }
  if (op_rule.min_rank > 0 && v.output.rank_known && v.output.rank() < op_rule.min_rank) {
    return Refused(
        {}, absl::StrCat("-> ", v.output.ToString(), " is below ", p.name, "'s minimum rank ",
                         op_rule.min_rank, " for ", v.op, " (op.", v.op, ".min_rank)"));
  }
  if (forms == nullptr) return {};
  const std::string key = absl::StrCat("op.", v.op, ".", pattern);
  for (size_t k = 0; k < v.inputs.size(); ++k) {
    if (!v.inputs[k].rank_known || Vague(v.inputs[k])) {
      return Refused({},
                     absl::StrCat("cannot prove ", p.name, "'s form (", key, "): shape of input ",
                                  k, " not known well enough to decide the broadcast class"),
                     true);
    }
  }
  if (v.op == "Expand" && (!v.output.rank_known || Vague(v.output))) {
    return Refused({},
                   absl::StrCat("cannot prove ", p.name, "'s form (", key,
                                "): the Expand's target shape is not known"),
                   true);
  }
  const std::string form = FormClass(v);
  // The probe makes only the second operand constant, and that operand is the one that
  // broadcasts: a computed operand broadcasting against a constant one was never measured,
  // whatever the symmetric class name says.
  if (v.rule == broadcast::RuleFamily::kNumpy && pattern != "computed") {
    for (size_t k = 0; k < v.inputs.size() && k < v.input_names.size(); ++k) {
      if (!is_constant(v.input_names[k]) && !(v.inputs[k] == v.output)) {
        return Refused(
            {}, absl::StrCat("broadcast as '", form, "' with the computed input ", k,
                             " broadcasting against a constant, which ", key, " of ", p.name,
                             " does not cover (only constants that broadcast were measured)"));
      }
    }
  }
  // A rank's own entry, where the measurement differs by rank, before the class's.
  auto support = forms->end();
  if (v.output.rank_known) {
    support = forms->find(absl::StrCat(form, "@", v.output.rank()));
  }
  if (support == forms->end()) support = forms->find(form);
  if (support == forms->end()) {
    return Refused({}, absl::StrCat("broadcast as '", form, "' with ", pattern, " operands, which ",
                                    key, " of ", p.name, " does not list"));
  }
  switch (support->second) {
    case FormSupport::kRuns:
      return {};
    case FormSupport::kRunsAligned:
      if (OperandsAligned(v)) return {};
      return Refused({}, absl::StrCat("broadcast as '", form, "' with ", pattern,
                                      " operands of different ranks; ", p.name,
                                      " runs it only with equal ranks (", key, ")"));
    case FormSupport::kRunsUnaligned:
      if (ConstantsBelowOutputRank(v, is_constant)) return {};
      return Refused({}, absl::StrCat("broadcast as '", form, "' with ", pattern,
                                      " operands, a constant "
                                      "at the output's rank; ",
                                      p.name,
                                      " runs it only with each "
                                      "constant below the output's rank (",
                                      key, ")"));
    case FormSupport::kRunsFirstFull:
      if (FirstOperandFull(v)) return {};
      return Refused(
          {},
          absl::StrCat("broadcast as '", support->first, "' with ", pattern,
                       " operands, the first not of the output's shape; ", p.name,
                       " runs it only with the first operand of the output's shape (", key, ")"));
    default:
      // A class's cell was measured at other shapes (issue 42: an engine's scalar Gemm C was wrong
      // against [1,5] and ran against [1,1]); said so, and the engine, where it is at hand,
      // decides the node itself (live, and the check of the written model).
      return Refused({}, absl::StrCat("broadcast as '", support->first, "' with ", pattern,
                                      " operands, which ", p.name, " ", Measured(support->second),
                                      support->second == FormSupport::kWrong
                                          ? " at the shapes its class was measured at"
                                          : "",
                                      " (", key, ")"));
  }
}

}  // namespace

FormDecision DecideForm(const analysis::NodeVerdict& v, const TargetProfile& p,
                        const std::function<bool(const std::string&)>& is_constant) {
  FormDecision d;
  // Refusals keep what `d` learned before them (the deciding cell, the input of unknown rank).
  auto fail = [&d](std::string why, bool cannot_prove = false) {
    return Refused(std::move(d), std::move(why), cannot_prove);
  };
  if (v.verdict == broadcast::Verdict::kError) {
    return fail(absl::StrCat("broadcast error: ", v.message));
  }
  if (v.rule == broadcast::RuleFamily::kLegacyAxis) {
    if (!p.Runs(Class::kLegacyAxis)) {
      return fail(
          absl::StrCat("legacy broadcast=1/axis form, which ", p.name, " does not run natively"));
    }
    return d;
  }
  // The op's measured rule for these operand kinds, when the profile has one: it decides the
  // class (the global `classes` summarize every op and would refuse what this op runs).
  const auto rule = p.op_rules.find(v.op);
  const OpRule* op_rule = rule == p.op_rules.end() ? nullptr : &rule->second;
  std::string pattern;
  const std::map<std::string, FormSupport>* forms = nullptr;
  if (op_rule != nullptr) {
    pattern = OperandKindPattern(v, is_constant);
    const auto it = op_rule->forms.find(pattern);
    if (it != op_rule->forms.end()) forms = &it->second;
    // A cell measured at these very unit axes decides before any class: the engine's behaviour
    // depends on the dims there (an engine measured runs `[1,1,1,384] - [1,1,1,1]`, which its class
    // refuses, and computes `[1,1,32] - [1,1,1]` wrongly, which its class accepts).
    if (const auto cells = op_rule->shape_cells.find(pattern);
        cells != op_rule->shape_cells.end()) {
      if (const ShapeCell* cell = FindShapeCell(cells->second, v.inputs); cell != nullptr) {
        d.shape_cell = absl::StrCat("op.", v.op, ".", pattern, ".shapes: ", ShapeCellShapes(*cell));
        if (cell->support == FormSupport::kRuns) return d;
        std::vector<std::string> shapes;
        for (const broadcast::Shape& s : v.inputs) shapes.push_back(s.ToString());
        return fail(absl::StrCat(absl::StrJoin(shapes, " and "), " with ", pattern,
                                 " operands, which ", p.name, " ", Measured(cell->support),
                                 " at these unit axes (op.", v.op, ".", pattern,
                                 ".shapes: ", ShapeCellShapes(*cell), ")"));
      }
    }
  }
  // What the table depends on: the class (unless every class the rule gives is native; the
  // op's rule, when there is one, decides which classes run), and the ranks (equal_rank,
  // max_rank, and any class decision).
  bool class_matters = false;
  bool numpy_all = false;
  if (v.rule == broadcast::RuleFamily::kNumpy) {
    numpy_all = p.Runs(Class::kSame) && p.Runs(Class::kScalar) && p.Runs(Class::kPerChannel) &&
                p.Runs(Class::kInnerAxis) && p.Runs(Class::kOuterAxis) && p.Runs(Class::kGeneral);
    class_matters = !(numpy_all && p.Runs(Class::kBidirectional));
  } else if (v.rule == broadcast::RuleFamily::kUnidirectional) {
    class_matters = !(p.Runs(Class::kSame) && p.Runs(Class::kUnidirectional));
  } else if (v.rule == broadcast::RuleFamily::kMatMul) {
    class_matters = !p.Runs(Class::kMatMulBatch);
  }
  const bool ranks_matter = class_matters || p.equal_rank || p.max_rank > 0;
  if (ranks_matter) {
    for (size_t k = 0; k < v.inputs.size(); ++k) {
      if (!v.inputs[k].rank_known) {
        d.unknown_rank_input = static_cast<int>(k);
        const std::string name = k < v.input_names.size() ? v.input_names[k] : "";
        return fail(absl::StrCat("cannot prove ", p.name, "'s form: rank of input ", k, " '", name,
                                 "' unknown"),
                    true);
      }
    }
  }
  // The rank limit first: no rewrite lifts it.
  bool too_high = p.TooHighRank(v.output);
  for (const broadcast::Shape& s : v.inputs) too_high |= p.TooHighRank(s);
  if (too_high) {
    return fail(absl::StrCat("-> ", v.output.ToString(), " exceeds ", p.name, "'s maximum rank ",
                             p.max_rank));
  }
  broadcast::BroadcastClass cls = v.broadcast_class;
  bool vague = false;
  for (const broadcast::Shape& s : v.inputs) vague |= Vague(s);
  if (v.rule == broadcast::RuleFamily::kUnidirectional && v.inputs.size() == 2) {
    cls = v.inputs[0] == v.inputs[1] && !vague ? Class::kSame : Class::kUnidirectional;
  }
  if (class_matters && vague && v.rule == broadcast::RuleFamily::kNumpy) {
    // Classes compare dims: an unknown or invented dim does not decide them. What can still be
    // shown: one operand dominates (not bidirectional), which settles targets that run every
    // other numpy class.
    bool dominated = false;
    for (const broadcast::Shape& s : v.inputs) dominated |= Dominates(s, v.inputs, v.output);
    if (dominated && numpy_all) {
      cls = Class::kGeneral;
    } else {
      return fail(absl::StrCat("cannot prove ", p.name,
                               "'s form: dims not known well enough to decide the broadcast "
                               "class"),
                  true);
    }
  }
  // Profiles name classes as text: the MatMul's batch class goes with it.
  const std::string named = analysis::BroadcastClassText(cls, v.batch_class);
  if (class_matters && forms == nullptr && !p.Runs(named)) {
    if (vague && cls == Class::kUnidirectional && v.inputs[0] == v.inputs[1]) {
      return fail(absl::StrCat("cannot prove ", p.name,
                               "'s form: dims not known well enough to show equal shapes"),
                  true);
    }
    return fail(
        absl::StrCat("broadcast as '", named, "', which ", p.name, " does not run natively"));
  }
  if (p.equal_rank) {
    bool unequal = false;
    if (v.rule == broadcast::RuleFamily::kNumpy) {
      int64_t rank = 0;
      for (const broadcast::Shape& s : v.inputs) rank = std::max(rank, s.rank());
      for (const broadcast::Shape& s : v.inputs) {
        if (s.rank() != rank && !(p.scalar_any_rank && ScalarLike(s))) unequal = true;
      }
    } else if (v.rule == broadcast::RuleFamily::kUnidirectional && v.inputs.size() == 2) {
      const broadcast::Shape& b = v.op == "Gemm" ? v.inputs[0] : v.inputs[1];
      const broadcast::Shape& t = v.op == "Gemm" ? v.inputs[1] : v.inputs[0];
      unequal = b.rank() != t.rank() && !(p.scalar_any_rank && ScalarLike(b));
    } else if (v.rule == broadcast::RuleFamily::kMatMul && v.inputs.size() == 2) {
      unequal = v.inputs[0].rank() >= 2 && v.inputs[1].rank() >= 2 &&
                v.inputs[0].rank() != v.inputs[1].rank();
    }
    if (unequal) {
      return fail(absl::StrCat("operands have different ranks; ", p.name, " needs equal ranks"));
    }
  }
  // The op's own rules, after the global ones: the measured form of this op with these operand
  // kinds.
  if (op_rule == nullptr) return d;
  return DecideOpRuleForm(v, p, *op_rule, forms, pattern, is_constant);
}

FormDecision DecideExpandForm(const broadcast::Shape& input, const broadcast::Shape& output,
                              bool input_constant, const TargetProfile& profile) {
  analysis::NodeVerdict v;
  v.op = "Expand";
  v.rule = broadcast::RuleFamily::kBidirectional;
  v.verdict = broadcast::Verdict::kOk;
  v.broadcast_class = broadcast::BroadcastClass::kBidirectional;
  v.input_names = {"input", "shape"};
  v.inputs = {input, output};  // the analysis records the target as the second operand
  v.output = output;
  return DecideForm(v, profile, [input_constant](const std::string& name) {
    return name == "shape" || (input_constant && name == "input");
  });
}

}  // namespace onnx_bcast::targets
