// legalize-measured's rewrite records (see record.h).
#include "passes/legalize/record.h"

#include <utility>

namespace onnx_bcast::passes::legalize {

void RecordRewrite(RewriteContext* ctx, int id, std::string action, std::string tensor,
                   std::string before, std::string after, std::string detail, int64_t bytes) {
  Rewrite r;
  r.action = std::move(action);
  r.tensor = std::move(tensor);
  r.before = std::move(before);
  r.after = std::move(after);
  r.detail = std::move(detail);
  r.bytes = bytes;
  ctx->Record(id, std::move(r));
}

}  // namespace onnx_bcast::passes::legalize
