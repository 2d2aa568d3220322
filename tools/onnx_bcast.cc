// onnx-bcast: make the broadcast semantics of ONNX models explicit, checked and verified.
// The CLI only parses arguments and calls into the library layers; no logic lives here. This
// file holds the command table, the top-level help and main; each subcommand is in its own
// tools/cmd_<name>.cc.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/exec/executor.h"
#include "tools/cli.h"
#include "tools/common_options.h"
#ifdef BCAST_WITH_MIMALLOC
#include <mimalloc.h>
#endif

namespace onnx_bcast::tools {
namespace {

const std::vector<const Command*>& Commands() {
  static const std::vector<const Command*> kCommands = {
      &CheckCommand(), &OptCommand(), &RunCommand(), &VerifyCommand(), &ProbeEngineCommand(),
  };
  return kCommands;
}

const Command* FindCommand(const std::string& name) {
  for (const Command* cmd : Commands()) {
    if (name == cmd->name) return cmd;
  }
  return nullptr;
}

void PrintTopHelp() {
  std::printf(
      "onnx-bcast %s: make the broadcast semantics of ONNX models explicit, checked and "
      "verified.\n\nUsage: onnx-bcast COMMAND [options]\n\nCommands:\n",
      BCAST_VERSION);
  for (const Command* cmd : Commands()) std::printf("  %-8s %s\n", cmd->name, cmd->summary);
  std::printf(
      "  %-8s %s\n\nRun 'onnx-bcast help COMMAND' for a command's options.\n\n"
      "Exit codes: 0 success; 1 found what it looks for (broadcast error, numeric mismatch);\n"
      "2 model cannot be loaded or is invalid; 3 unsupported (opt: a node not put into the\n"
      "target's form, nothing written); 4 output cannot be written;\n"
      "64 usage error; 65 an input given to run does not fit the model's declared type or\n"
      "shape (or binds a symbol unlike another input or --dim).\n",
      "help", "show help for a command");
}

// `onnx-bcast help [COMMAND]`.
int Help(const std::vector<std::string>& args) {
  if (args.size() == 1) {
    PrintTopHelp();
    return kExitOk;
  }
  const Command* cmd = FindCommand(args[1]);
  if (cmd == nullptr) {
    PrintError(absl::StrCat("onnx-bcast: unknown command '", args[1], "'"));
    return kExitUsage;
  }
  std::printf("%s", cmd->help(*cmd).c_str());
  return kExitOk;
}

// The first word picks the command, and that command's CommandLine parses the rest. Not CLI11
// subcommands: they read a later argument naming another command (a model file called "run")
// as that command, and hand what follows "--" back to the top level once a positional is set.
int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    PrintTopHelp();
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintTopHelp();
    return kExitOk;
  }
  if (first == "--version") {
    std::printf("onnx-bcast %s\n", BCAST_VERSION);
    return kExitOk;
  }
  if (first == "help") return Help(args);
  const Command* cmd = FindCommand(first);
  if (cmd == nullptr) {
    PrintError(absl::StrCat("onnx-bcast: unknown command '", first, "' (see 'onnx-bcast --help')"));
    return kExitUsage;
  }
  return cmd->main(*cmd, {args.begin() + 1, args.end()});
}

}  // namespace
}  // namespace onnx_bcast::tools

int main(int argc, char** argv) {
#ifdef BCAST_WITH_MIMALLOC
  // A failed `new` throws std::bad_alloc (tools/allocator.cc replaces mimalloc's aborting
  // operator new), caught at the command boundary (ParseAndRun).
  // Allocation failures are reported by us, in one line; mimalloc prints nothing.
  mi_option_disable(mi_option_show_errors);
  mi_option_disable(mi_option_verbose);
  // 2 MiB pages (transparent huge pages when none are reserved) for the allocator's segments:
  // large graphs otherwise spend much of their time in first-touch page faults.
  mi_option_enable(mi_option_large_os_pages);
#endif
  // OpenBLAS's threads spin for about 0.1 s after it loads: CPU that check and opt, which
  // never multiply, gave away on every call (0.11 s of system time on a 100k-node check
  // taking 0.22 s).
  onnx_bcast::runtime::EndBlasThreads();
  return onnx_bcast::tools::Main(argc, argv);
}
