// Whole-model peer comparison over the committed export corpus (issue #24), run by
// bench/peer/compare_models.sh: for each static model (the corpus with its dims bound by
// `onnx-bcast opt --passes none --dim ...`), alternates rounds of
//   ours - `onnx-bcast run MODEL --bench N --threads T` (its median),
//   ORT  - onnxruntime-node, all graph optimizations, T intra-op threads, N timed runs after a
//          warm-up (median of the profiler's model_run events: the Node binding's copies are
//          not counted),
// and prints the median of each side over the rounds and the ratio ours / ORT. With
// --baseline BIN, a second onnx-bcast (say, a build of the previous commit) takes its turn in
// every round too, so a change is measured side by side with its peer.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  endProfiling, isModelRun, median, oursModelMs, ort, parseArgs, randomInput, sessionFeeds,
  sessionOptions,
} from './ort_common.mjs';

const kFlags = {
  '--onnx-bcast': ['onnxBcast', 'string'],
  '--model': ['models', 'list'],
  '--threads': ['threads', 'numbers'],
  '--runs': ['runs', 'number'],
  '--rounds': ['rounds', 'number'],
  '--json': ['json', 'string'],
  '--baseline': ['baseline', 'string'],
};

async function ortRun(model, threads, runs, profileDir) {
  const prefix = `m_${path.basename(model, '.onnx')}_t${threads}_`;
  const session = await ort.InferenceSession.create(model, sessionOptions(threads, profileDir, prefix));
  const feeds = sessionFeeds(session, randomInput);
  const warm = 3;
  for (let r = 0; r < warm + runs; ++r) await session.run(feeds);
  const events = await endProfiling(session, profileDir, prefix);
  await session.release?.();
  const times = events.filter(isModelRun).map((e) => e.dur / 1000);
  return median(times.slice(warm));
}

async function main() {
  const args = parseArgs(process.argv, kFlags, { threads: [1], runs: 20, rounds: 3, models: [] });
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bcast-models-'));
  console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''}; ${args.rounds} alternating ` +
              `rounds of ${args.runs} runs per side; medians in ms`);
  const base = args.baseline !== undefined;
  console.log(['model', 'thr', ...(base ? ['before'] : []), 'ours', 'ORT',
               ...(base ? ['before/ORT'] : []), 'ours/ORT'].join('\t'));
  const rows = [];
  for (const model of args.models) {
    for (const threads of args.threads) {
      const before = [], ours = [], theirs = [];
      try {
        for (let r = 0; r < args.rounds; ++r) {
          if (base) before.push(oursModelMs(args.baseline, model, threads, args.runs));
          ours.push(oursModelMs(args.onnxBcast, model, threads, args.runs));
          theirs.push(await ortRun(model, threads, args.runs, profileDir));
        }
      } catch (e) {
        console.log([path.basename(model, '.onnx'), threads, 'failed:', String(e.message).split('\n')[0]].join('\t'));
        continue;
      }
      const row = { model: path.basename(model, '.onnx'), threads, ours_ms: median(ours),
                    ort_ms: median(theirs) };
      row.ratio = row.ours_ms / row.ort_ms;
      if (base) {
        row.before_ms = median(before);
        row.before_ratio = row.before_ms / row.ort_ms;
      }
      rows.push(row);
      console.log([row.model, threads, ...(base ? [row.before_ms.toFixed(3)] : []),
                   row.ours_ms.toFixed(3), row.ort_ms.toFixed(3),
                   ...(base ? [row.before_ratio.toFixed(2)] : []), row.ratio.toFixed(2)].join('\t'));
    }
  }
  for (const threads of args.threads) {
    const ratios = rows.filter((r) => r.threads === threads).map((r) => r.ratio);
    if (ratios.length) {
      console.log(`threads ${threads}: median ours/ORT ${median(ratios).toFixed(2)}, worst ` +
                  `${Math.max(...ratios).toFixed(2)} over ${ratios.length} models`);
    }
  }
  fs.rmSync(profileDir, { recursive: true, force: true });
  if (args.json) fs.writeFileSync(args.json, JSON.stringify({ ort: ort.env.versions?.common ?? null, rows }, null, 1));
}

main().catch((e) => { console.error(e); process.exit(1); });
