// legalize-ncnn and legalize (see legalize_ncnn.h).
#include "passes/legalize_ncnn.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "broadcast/rules.h"
#include "passes/rewrite_context.h"
#include "passes/targets.h"

namespace onnx_bcast::passes {
namespace {

using bcast::Shape;

bool ScalarLike(const Shape& s) {
  for (const bcast::Dim& d : s.dims) {
    if (!d.Is(1)) return false;
  }
  return true;
}

class Legalize : public Pass {
 public:
  explicit Legalize(const TargetProfile* fixed) : fixed_(fixed) {}

  absl::Status Run(proto::Model* model, const PassOptions& options, PassStats* stats) override {
    const TargetProfile* profile = fixed_ != nullptr ? fixed_ : options.target;
    if (profile == nullptr) {
      return absl::FailedPreconditionError(
          "the 'legalize' pass needs a target table (--target or --target-file)");
    }
    return RewriteEveryGraph(
        model, fixed_ != nullptr ? "legalize-ncnn" : "legalize", options, stats,
        [profile](RewriteContext& ctx) { return LegalizeGraph(&ctx, *profile); });
  }

 private:
  static absl::Status LegalizeGraph(RewriteContext* ctx, const TargetProfile& p) {
    proto::GraphEditor& g = ctx->graph();
    for (int id = 0; id < g.original_node_count(); ++id) {
      const std::optional<BroadcastOp> found = ctx->NumpyFormBroadcast(id);
      if (!found) continue;
      if (absl::Status s = LegalizeNode(ctx, p, id, *found); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  static std::vector<Shape> InputShapes(RewriteContext* ctx, int id) {
    std::vector<Shape> shapes;
    for (const std::string& in : ctx->graph().node(id).input()) {
      shapes.push_back(in.empty() ? Shape::UnknownRank() : ctx->ShapeOf(in));
    }
    return shapes;
  }

  static absl::Status LegalizeNode(RewriteContext* ctx, const TargetProfile& p, int id,
                                   const BroadcastOp& op) {
    const onnx::NodeProto& n = ctx->graph().node(id);
    std::vector<Shape> shapes = InputShapes(ctx, id);
    for (const Shape& s : shapes) {
      if (!s.rank_known) {
        ctx->Debug(id, "an operand has an unknown rank");
        return absl::OkStatus();
      }
    }
    const Shape out = n.output_size() > 0 ? ctx->ShapeOf(n.output(0)) : Shape::UnknownRank();
    std::vector<std::string> texts;
    for (const Shape& s : shapes) texts.push_back(s.ToString());
    for (size_t k = 0; k <= shapes.size(); ++k) {
      const Shape& s = k < shapes.size() ? shapes[k] : out;
      if (p.TooHighRank(s)) {
        // Left for the target check, which lists every node outside the table.
        ctx->Debug(id, absl::StrCat(n.op_type(), " '", ctx->Label(id), "': ",
                                    k < shapes.size() ? absl::StrCat("input '", n.input(k), "'")
                                                      : std::string("output"),
                                    " ", s.ToString(), " has rank ", s.rank(), ", more than ",
                                    p.name, "'s maximum of ", p.max_rank,
                                    p.batch_axis ? " beyond a leading batch of 1" : "",
                                    " (operands ", absl::StrJoin(texts, " and "), ")"));
        return absl::OkStatus();
      }
    }
    if (p.equal_rank) {
      // Scalars stay scalars where the engine takes them at any rank.
      for (int k = 0; k < n.input_size(); ++k) {
        const std::optional<int64_t> r = ctx->OperandRank(id, k);
        if (r && !(p.scalar_any_rank && ScalarLike(shapes[k]))) ctx->AlignOperand(id, k, *r);
      }
      shapes = InputShapes(ctx, id);
    }
    if (op.multidirectional()) {
      const bcast::BroadcastResult res = bcast::BroadcastNumpy(shapes);
      if (res.verdict == bcast::Verdict::kError) {
        return absl::InvalidArgumentError(
            absl::StrCat(n.op_type(), " '", ctx->Label(id), "': ", absl::StrJoin(texts, " and "),
                         " are not broadcastable (numpy rule, ", res.reason, ")"));
      }
      if (res.verdict == bcast::Verdict::kUnknown) return absl::OkStatus();
      for (size_t round = 0; round <= shapes.size(); ++round) {
        const std::string cls(bcast::BroadcastClassName(bcast::Classify(shapes, res.output)));
        if (p.Runs(cls)) return absl::OkStatus();
        // Expand the operand closest to the output shape that does not have it yet.
        int best = -1;
        int64_t best_score = -1;
        for (int k = 0; k < static_cast<int>(shapes.size()); ++k) {
          if (shapes[k] == res.output) continue;
          const Shape& s = shapes[k];
          int64_t score = 0;
          for (int64_t i = 0; i < s.rank(); ++i) {
            const int64_t j = res.output.rank() - s.rank() + i;
            score += j >= 0 && s.dims[i] == res.output.dims[j];
          }
          if (score > best_score) {
            best = k;
            best_score = score;
          }
        }
        if (best < 0) break;
        absl::StatusOr<bool> done = ctx->ExpandOperand(id, best, res.output);
        if (!done.ok()) return done.status();
        if (!*done) break;
        shapes = InputShapes(ctx, id);
      }
      ctx->Debug(id, absl::StrCat("cannot make the broadcast of ", absl::StrJoin(texts, " and "),
                                  " one that ", p.name, " runs natively (classes: ",
                                  absl::StrJoin(p.native_classes, ", "), ")"));
      return absl::OkStatus();
    }
    if (op.kind == BroadcastOpKind::kPRelu && n.input_size() == 2) {
      if (!p.Runs("unidirectional") && !(ctx->ShapeOf(n.input(1)) == shapes[0])) {
        absl::StatusOr<bool> done = ctx->ExpandOperand(id, 1, shapes[0]);
        if (!done.ok()) return done.status();
      }
    } else if (op.kind == BroadcastOpKind::kGemm && n.input_size() >= 3 && !n.input(2).empty()) {
      if (!p.Runs("unidirectional")) {
        if (absl::Status s = ctx->ExpandGemmC(id); !s.ok()) return s;
      }
    }
    return absl::OkStatus();
  }

  const TargetProfile* fixed_;
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeNcnnPass() {
  return std::make_unique<Legalize>(FindTarget("ncnn"));
}

std::unique_ptr<Pass> CreateLegalizeTargetPass() { return std::make_unique<Legalize>(nullptr); }

}  // namespace onnx_bcast::passes
