// Exact-shape cells of a target profile (see shape_cells.h).
#include "targets/shape_cells.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "support/status_macros.h"

namespace onnx_bcast::targets {
namespace {

// `value` split at the commas outside brackets.
absl::StatusOr<std::vector<std::string>> SplitEntries(absl::string_view value) {
  std::vector<std::string> entries;
  std::string current;
  int depth = 0;
  for (char c : value) {
    if (c == '[') ++depth;
    if (c == ']' && --depth < 0) {
      return absl::InvalidArgumentError(absl::StrCat("unbalanced ']' in '", value, "'"));
    }
    if (c == ',' && depth == 0) {
      entries.push_back(std::move(current));
      current.clear();
      continue;
    }
    current.push_back(c);
  }
  if (depth != 0) return absl::InvalidArgumentError(absl::StrCat("unclosed '[' in '", value, "'"));
  entries.push_back(std::move(current));
  std::vector<std::string> out;
  for (std::string& e : entries) {
    absl::StripAsciiWhitespace(&e);
    if (!e.empty()) out.push_back(std::move(e));
  }
  return out;
}

// "[1,N,4]" -> {1, kAnyExtent, 4}.
absl::StatusOr<std::vector<int64_t>> ParseShape(absl::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a shape like [1,N,4]"));
  }
  std::vector<int64_t> dims;
  const absl::string_view inner = text.substr(1, text.size() - 2);
  if (absl::StripAsciiWhitespace(inner).empty()) return dims;  // rank 0
  for (absl::string_view d : absl::StrSplit(inner, ',')) {
    d = absl::StripAsciiWhitespace(d);
    int64_t v = 0;
    if (d == "N") {
      dims.push_back(ShapeCell::kAnyExtent);
    } else if (absl::SimpleAtoi(d, &v) && v >= 0) {
      dims.push_back(v);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("dim '", d, "' of '", text, "' is neither a number nor N"));
    }
  }
  return dims;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) {
    parts.push_back(d == ShapeCell::kAnyExtent ? "N" : absl::StrCat(d));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

}  // namespace

absl::StatusOr<std::vector<ShapeCell>> ParseShapeCells(absl::string_view value) {
  BCAST_ASSIGN_OR_RETURN(std::vector<std::string> entries, SplitEntries(value));
  std::vector<ShapeCell> cells;
  for (const std::string& entry : entries) {
    ShapeCell cell;
    // The support follows the last ']' (a colon cannot occur inside a shape).
    const size_t close = entry.rfind(']');
    if (close == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry, "' has no shape"));
    }
    std::string rest = entry.substr(close + 1);
    absl::StripAsciiWhitespace(&rest);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        return absl::InvalidArgumentError(
            absl::StrCat("'", entry,
                         "': expected ': refused', ': wrong' or ': crashed' after "
                         "the shapes"));
      }
      std::string support = rest.substr(1);
      absl::StripAsciiWhitespace(&support);
      if (support == FormSupportName(FormSupport::kRefused)) {
        cell.support = FormSupport::kRefused;
      } else if (support == FormSupportName(FormSupport::kWrong)) {
        cell.support = FormSupport::kWrong;
      } else if (support == FormSupportName(FormSupport::kCrashed)) {
        cell.support = FormSupport::kCrashed;
      } else {
        // aligned, unaligned and first-full qualify a class; a cell's shapes say it all.
        return absl::InvalidArgumentError(absl::StrCat(
            "'", entry, "': '", support, "' is not refused, wrong or crashed (nothing: runs)"));
      }
    }
    for (absl::string_view shape :
         absl::StrSplit(absl::string_view(entry).substr(0, close + 1), ']', absl::SkipEmpty())) {
      shape = absl::StripAsciiWhitespace(shape);
      if (shape.empty()) continue;
      absl::StatusOr<std::vector<int64_t>> dims = ParseShape(absl::StrCat(shape, "]"));
      if (!dims.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("'", entry, "': ", dims.status().message()));
      }
      cell.operands.push_back(*std::move(dims));
    }
    if (cell.operands.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("'", entry, "' has no shape"));
    }
    cells.push_back(std::move(cell));
  }
  return cells;
}

std::string ShapeCellShapes(const ShapeCell& cell) {
  std::vector<std::string> shapes;
  for (const std::vector<int64_t>& s : cell.operands) shapes.push_back(ShapeText(s));
  return absl::StrJoin(shapes, " ");
}

std::string FormatShapeCells(absl::Span<const ShapeCell> cells) {
  std::vector<std::string> entries;
  for (const ShapeCell& c : cells) {
    entries.push_back(
        c.support == FormSupport::kRuns
            ? ShapeCellShapes(c)
            : absl::StrCat(ShapeCellShapes(c), ": ", std::string(FormSupportName(c.support))));
  }
  return absl::StrJoin(entries, ", ");
}

ShapeCell ShapeCellOf(absl::Span<const std::vector<int64_t>> extents, FormSupport support) {
  ShapeCell cell;
  cell.support = support;
  for (const std::vector<int64_t>& e : extents) {
    std::vector<int64_t> dims;
    for (int64_t d : e) dims.push_back(d > 1 ? ShapeCell::kAnyExtent : d);
    cell.operands.push_back(std::move(dims));
  }
  return cell;
}

const ShapeCell* FindShapeCell(absl::Span<const ShapeCell> cells,
                               absl::Span<const broadcast::Shape> inputs) {
  std::vector<std::vector<int64_t>> extents;
  for (const broadcast::Shape& s : inputs) {
    std::optional<std::vector<int64_t>> e = s.Extents();
    if (!e) return nullptr;
    extents.push_back(*std::move(e));
  }
  for (const ShapeCell& c : cells) {
    if (c.operands.size() != extents.size()) continue;
    bool match = true;
    for (size_t k = 0; k < extents.size() && match; ++k) {
      const std::vector<int64_t>& want = c.operands[k];
      const std::vector<int64_t>& have = extents[k];
      if (want.size() != have.size()) {
        match = false;
        break;
      }
      for (size_t a = 0; a < want.size(); ++a) {
        const bool ok = want[a] == ShapeCell::kAnyExtent ? have[a] > 1 : have[a] == want[a];
        if (!ok) {
          match = false;
          break;
        }
      }
    }
    if (match) return &c;
  }
  return nullptr;
}

}  // namespace onnx_bcast::targets
