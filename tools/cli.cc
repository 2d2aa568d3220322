// Command-line plumbing shared by the onnx-bcast subcommands.
#include "tools/cli.h"

#include <unistd.h>

#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace onnx_bcast::cli {

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() || it->second.empty() ? fallback : it->second.back();
}

const std::vector<std::string>& ParsedArgs::GetAll(const std::string& name) const {
  static const std::vector<std::string> kEmpty;
  auto it = values.find(name);
  return it == values.end() ? kEmpty : it->second;
}

absl::Status ParseArgs(const std::vector<std::string>& args,
                       const std::vector<OptionSpec>& options, ParsedArgs* out) {
  bool only_positionals = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positionals || arg.size() < 2 || arg[0] != '-') {
      out->positionals.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positionals = true;
      continue;
    }
    std::string name, value;
    bool has_inline_value = false;
    const OptionSpec* spec = nullptr;
    if (arg[1] == '-') {
      const size_t eq = arg.find('=');
      name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
        has_inline_value = true;
      }
      for (const auto& o : options) {
        if (name == o.name) spec = &o;
      }
    } else if (arg.size() == 2) {
      for (const auto& o : options) {
        if (o.short_name == arg[1]) spec = &o;
      }
      if (spec != nullptr) name = spec->name;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", arg, "'"));
    }
    if (spec->metavar == nullptr) {
      if (has_inline_value) {
        return absl::InvalidArgumentError(absl::StrCat("option '--", name, "' takes no value"));
      }
      value = "1";
    } else if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("option '--", name, "' needs a value (", spec->metavar, ")"));
      }
      value = args[++i];
    }
    auto& slot = out->values[name];
    if (!slot.empty() && !spec->repeatable) {
      return absl::InvalidArgumentError(absl::StrCat("option '--", name, "' given twice"));
    }
    slot.push_back(value);
  }
  return absl::OkStatus();
}

std::string FormatOptions(const std::vector<OptionSpec>& options) {
  std::string text;
  for (const auto& o : options) {
    std::string left = o.short_name ? absl::StrCat("  -", std::string(1, o.short_name), ", --")
                                    : std::string("      --");
    absl::StrAppend(&left, o.name);
    if (o.metavar != nullptr) absl::StrAppend(&left, " ", o.metavar);
    if (left.size() < 30) left.resize(30, ' ');
    else absl::StrAppend(&left, "\n", std::string(30, ' '));
    absl::StrAppend(&text, left, o.help, o.repeatable ? " (repeatable)" : "", "\n");
  }
  return text;
}

absl::Status ParseDoubleOption(const ParsedArgs& args, const std::string& name, double* value) {
  if (!args.Has(name)) return absl::OkStatus();
  if (!absl::SimpleAtod(args.Get(name), value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '--", name, "': '", args.Get(name), "' is not a number"));
  }
  return absl::OkStatus();
}

absl::Status ParseIntOption(const ParsedArgs& args, const std::string& name, int64_t* value) {
  if (!args.Has(name)) return absl::OkStatus();
  if (!absl::SimpleAtoi(args.Get(name), value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("option '--", name, "': '", args.Get(name), "' is not an integer"));
  }
  return absl::OkStatus();
}

int LoadExitCode(const absl::Status& status) {
  return status.code() == absl::StatusCode::kUnimplemented ? kExitUnsupported : kExitBadModel;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    } else if (c == 0xc2 && next >= 0x80 && next <= 0x9f) {
      absl::StrAppend(&out, "\\u00", absl::Hex(next, absl::kZeroPad2));
      ++i;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

void PrintError(const std::string& message) {
  const std::string line = TerminalSafe(absl::StrReplaceAll(message, {{"\n", " "}}));
  std::fprintf(stderr, "%s\n", line.c_str());
}

void PrintOut(std::string_view text, bool to_stderr) {
  const std::string safe = TerminalSafe(text);
  std::fwrite(safe.data(), 1, safe.size(), to_stderr ? stderr : stdout);
}

bool StderrIsTerminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace onnx_bcast::cli
