#!/usr/bin/env python3
"""bench_peer_models: bench/peer/compare_models.sh's verdicts, run against a fake onnxruntime
(issue 43 item 6), in a second and without the network. A copy of bench/peer runs on one small
model (y = 2x) with a fake `onnxruntime-node` module beside it that computes the model rightly,
wrongly (2x + 1) or refuses it, with cmake stubbed (it records its calls) and npm forbidden:
- right: exit 0, the model's ratio printed;
- wrong: exit 1, naming the model whose outputs differ from ORT's (a fast wrong kernel must not
  improve the ratio: ours is checked on ORT's inputs against ORT's outputs);
- refused by ORT: exit 1, naming the model (once dropped from the table silently, exit 0);
- every run brings onnx-bcast up to date (`cmake --build`), never reusing a stale binary;
- ours/ORT is the median of the rounds' own ratios (pairedRatio): a slow spell moving both
  sides of a round, or one side of one round, leaves it alone.
usage: bench_peer_test.py SOURCE_DIR ONNX_BCAST
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from suite_common import make_stubs, report

FAKE_ORT = r"""
// A stand-in for onnxruntime-node: one model, y = 2x over x float32[2,3]; FAKE_ORT=wrong adds
// 1, FAKE_ORT=fail refuses every model.
import fs from 'node:fs';
class Tensor {
  constructor(type, data, dims) { this.type = type; this.data = data; this.dims = dims; }
}
class Session {
  constructor(options) { this.options = options ?? {}; this.runs = 0; }
  get inputNames() { return ['x']; }
  get outputNames() { return ['y']; }
  get inputMetadata() { return [{ name: 'x', type: 'tensor(float)', shape: [2, 3] }]; }
  async run(feeds) {
    ++this.runs;
    const x = feeds.x.data;
    const y = new Float32Array(x.length);
    for (let i = 0; i < x.length; ++i) y[i] = 2 * x[i] + (process.env.FAKE_ORT === 'wrong' ? 1 : 0);
    return { y: new Tensor('float32', y, [2, 3]) };
  }
  async endProfiling() {
    const file = `${this.options.profileFilePrefix}fake.json`;
    const events = Array.from({ length: this.runs }, () => ({ cat: 'Session', name: 'model_run', dur: 1000 }));
    fs.writeFileSync(file, JSON.stringify(events));
    return file;
  }
  async release() {}
}
const InferenceSession = {
  async create(model, options) {
    if (process.env.FAKE_ORT === 'fail') throw new Error('fake ORT refuses the model');
    return new Session(options);
  },
};
export default { InferenceSession, Tensor, env: { versions: { common: 'fake' } } };
"""

MODEL = """<ir_version: 8, opset_import: ["" : 13]>
double (float[2,3] x) => (float[2,3] y) <float[1] two = {2}> {
  y = Mul (x, two)
}
"""

STUB = """#!/bin/sh
echo "$(basename "$0") $*" >>"$PEER_TEST_LOG"
[ "$(basename "$0")" = npm ] && { echo "npm must not run in this test" >&2; exit 1; }
exit 0
"""


def make_tree(src, cli, tmp):
    peer = os.path.join(tmp, "bench", "peer")
    os.makedirs(os.path.join(peer, "models"))
    for f in ("common.sh", "compare_models.sh", "ort_models.mjs", "ort_common.mjs",
              "package.json"):
        shutil.copy2(os.path.join(src, "bench", "peer", f), peer)
    fake = os.path.join(peer, "node_modules", "onnxruntime-node")
    os.makedirs(fake)
    with open(os.path.join(fake, "package.json"), "w") as f:
        json.dump({"name": "onnxruntime-node", "type": "module", "main": "index.js"}, f)
    with open(os.path.join(fake, "index.js"), "w") as f:
        f.write(FAKE_ORT)
    corpus = os.path.join(tmp, "tests", "fixtures", "exported")
    os.makedirs(corpus)
    with open(os.path.join(corpus, "manifest.json"), "w") as f:
        f.write("{}")
    text = os.path.join(tmp, "double.onnxtxt")
    with open(text, "w") as f:
        f.write(MODEL)
    subprocess.run([cli, "opt", text, "-o", os.path.join(peer, "models", "double.onnx"),
                    "--passes", "none", "-q"], check=True)
    build = os.path.join(tmp, "build")
    os.makedirs(os.path.join(build, "bin"))
    open(os.path.join(build, "CMakeCache.txt"), "w").close()
    os.symlink(cli, os.path.join(build, "bin", "onnx-bcast"))
    stubs = os.path.join(tmp, "stubs")
    make_stubs(stubs, ("cmake", "npm"), STUB)
    return peer, build, stubs


def run(peer, build, stubs, log, mode):
    env = dict(os.environ, FAKE_ORT=mode, PEER_TEST_LOG=log,
               PATH=stubs + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
    r = subprocess.run(["bash", os.path.join(peer, "compare_models.sh"), "--build-dir", build,
                        "--runs", "2", "--rounds", "1"], env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    return r.returncode, r.stdout + r.stderr


def main():
    src, cli = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if shutil.which("node") is None:
        print("bench_peer_models: node not found (scripts/setup.sh does not install it): skipped")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        peer, build, stubs = make_tree(src, cli, tmp)
        log = os.path.join(tmp, "calls.log")
        for mode, code, needles in [
            ("right", 0, ["double", "over 1 of 1 models"]),
            ("wrong", 1, ["double at 224x224: our outputs differ from ORT's"]),
            ("fail", 1, ["failed: 1 of 1 models: double", "fake ORT refuses the model"]),
        ]:
            open(log, "w").close()
            got, out = run(peer, build, stubs, log, mode)
            if got != code or any(n not in out for n in needles):
                failures.append(f"ORT {mode}: exit {got} (want {code}), output lacks one of "
                                f"{needles}:\n{out}")
            with open(log) as f:
                calls = f.read()
            if "cmake --build" not in calls:
                failures.append(f"ORT {mode}: onnx-bcast was not brought up to date (cmake "
                                f"--build never ran; calls: {calls!r})")
        # pairedRatio on rounds a slow spell hit: both sides of rounds 2-3 (x1.5), and ours
        # alone in round 4. Each side's median would give 1.5 / 1.0; the rounds' own ratios
        # are 1, 1, 1, 1.5, 1.
        probe = ("import { pairedRatio } from './ort_common.mjs';"
                 "console.log(pairedRatio([2, 2, 3, 3, 3], [2, 2, 3, 3, 2]), "
                 "pairedRatio([1, 4], [1, 1]))")
        r = subprocess.run(["node", "--input-type=module", "-e", probe], cwd=peer,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0 or r.stdout.split() != ["1", "2.5"]:
            failures.append(f"pairedRatio: want '1 2.5', got {r.stdout!r} {r.stderr!r}")
    return report("bench_peer_models", failures, "a wrong or refused model fails the "
                  "comparison, named; the binary is rebuilt first")


if __name__ == "__main__":
    sys.exit(main())
