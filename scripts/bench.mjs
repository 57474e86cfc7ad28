#!/usr/bin/env node
// `npm run bench`: kp's wall time and peak memory on generated kube-proxy dumps, beside the
// system tool that reads the same input as a yardstick, plus kp's start-up cost. Prints a
// markdown table and puts it in docs/benchmarks.md (between the bench markers).
//
//   node scripts/bench.mjs [--sizes 1000,10000] [--endpoints 10] [--runs 3] [--comments auto|always] [--no-write]
//
// Inputs go to a temporary folder (never the repo) that is removed at the end. Formats are
// entries of FORMATS below; nft text / nft -j / ipvsadm rows plug in there.
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {cpus, freemem, release, tmpdir, totalmem} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'
import {generateIptablesSave, serviceName} from './bench/gen-iptables.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const KP = [process.execPath, join(ROOT, 'bin/run.js')]
const TIME = '/usr/bin/time'
const DOC = join(ROOT, 'docs/benchmarks.md')
const START = '<!-- bench:start -->'
const END = '<!-- bench:end -->'

const {values: opts} = parseArgs({
  options: {
    sizes: {type: 'string', default: '1000,10000'},
    endpoints: {type: 'string', default: '10'},
    runs: {type: 'string', default: '3'},
    // auto: kube-proxy's large-cluster mode drops SVC→SEP and SEP comments above 1000 endpoints.
    comments: {type: 'string', default: 'auto'},
    'startup-runs': {type: 'string', default: '10'},
    'no-write': {type: 'boolean', default: false},
  },
})
const sizes = opts.sizes.split(',').map(Number)
const endpointsPerService = Number(opts.endpoints)
const runs = Number(opts.runs)

/**
 * One entry per input format. `generate(path, services, endpoints)` writes a dump;
 * `yardstick(path)` is the argv of a system tool that reads the same dump in full;
 * `explainTarget(services)` names one service for `kp explain`.
 */
const FORMATS = [
  {
    id: 'iptables-save',
    label: `iptables-save (nf_tables layout${opts.comments === 'always' ? ', comments kept' : ''})`,
    file: 'iptables-save.txt',
    generate: (path, services, endpoints) => generateIptablesSave(path, {services, endpointsPerService: endpoints, comments: opts.comments}),
    yardstick: {name: 'iptables-restore-translate -f', argv: (path) => ['iptables-restore-translate', '-f', path]},
    explainTarget: (services) => {
      const s = serviceName(Math.floor(services / 2))
      return `${s.namespace}/${s.name}:${s.portName}`
    },
  },
  // Hooks, not written yet: an `nft list table ip kube-proxy` text generator (yardstick
  // `nft -c -f FILE` in a namespace), its `nft -j` twin, and `ipvsadm -Sn` + `ipset save`
  // (yardstick `ipset restore -n` in a namespace). Each is one more entry of this shape.
]

const hasTime = existsSync(TIME)

/** Runs argv with stdout discarded; resolves {seconds, maxRssMB, exitCode, stderr}. */
function measure(argv) {
  const full = hasTime ? [TIME, '-f', '__kp_bench__ %e %M %U %S', ...argv] : argv
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(full[0], full.slice(1), {cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: {...process.env, NO_COLOR: '1'}})
    let stderr = ''
    child.stderr.on('data', (b) => (stderr += b))
    child.on('error', reject)
    child.on('close', (code) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e9
      const m = /__kp_bench__ ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(stderr)
      // time(1) exits with the command's status and adds a line saying so; drop both marker lines.
      const text = stderr.replace(/^(__kp_bench__ .*|Command exited with non-zero status \d+)\n?/gm, '')
      resolve({seconds: m ? Number(m[1]) : wall, cpuSeconds: m ? Number(m[3]) + Number(m[4]) : null, maxRssMB: m ? Number(m[2]) / 1024 : null, exitCode: code, stderr: text})
    })
  })
}

async function median(argv, n) {
  const results = []
  for (let i = 0; i < n; i++) {
    const r = await measure(argv)
    if (r.exitCode !== 0) return {failed: `exit ${r.exitCode}: ${r.stderr.trim().split('\n')[0] ?? ''}`}
    results.push(r)
  }
  results.sort((a, b) => a.seconds - b.seconds)
  const mid = results[Math.floor(results.length / 2)]
  const cpu = results.map((r) => r.cpuSeconds).filter((c) => c !== null).sort((a, b) => a - b)
  return {seconds: mid.seconds, cpuSeconds: cpu.length ? cpu[Math.floor(cpu.length / 2)] : null, maxRssMB: Math.max(...results.map((r) => r.maxRssMB ?? 0)) || null}
}

const fmt = (r) =>
  r.failed ? `failed (${r.failed})` : `${r.seconds.toFixed(2)} s${r.cpuSeconds !== null ? ` (cpu ${r.cpuSeconds.toFixed(2)} s)` : ''}${r.maxRssMB ? `, ${Math.round(r.maxRssMB)} MB` : ''}`
// Wall time, and CPU time (user + sys), which a busy machine disturbs less.
const pct = (a, b) =>
  a.failed || b.failed ? 'n/a' : `${Math.round((100 * a.seconds) / b.seconds)} %${a.cpuSeconds && b.cpuSeconds ? ` (cpu ${Math.round((100 * a.cpuSeconds) / b.cpuSeconds)} %)` : ''}`

function machine() {
  const model = cpus()[0]?.model ?? 'unknown CPU'
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  return [
    `- date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `- machine: ${cpus().length} × ${model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start), Linux ${release()}`,
    `- node ${process.version}; load average at the end: ${load} (other work on the machine makes times noisier)`,
    `- timing: ${hasTime ? '`/usr/bin/time -f "%e %M %U %S"` (wall seconds, peak RSS, user + sys CPU seconds)' : 'wall clock only (/usr/bin/time is missing: apt-get install time)'}; median of ${runs} runs, peak memory the largest of them`,
  ].join('\n')
}

async function main() {
  if (!existsSync(join(ROOT, 'dist/commands/list.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run bench does)')
  const tmp = mkdtempSync(join(tmpdir(), 'kp-bench-'))
  const rows = []
  const checks = []
  try {
    for (const format of FORMATS) {
      const perSize = []
      for (const services of sizes) {
        const path = join(tmp, `${services}x${endpointsPerService}-${format.file}`)
        const gen = await format.generate(path, services, endpointsPerService)
        process.stderr.write(`bench: ${format.id} ${services}×${endpointsPerService}: ${gen.lines} lines, ${(gen.bytes / 1e6).toFixed(1)} MB\n`)
        const list = await median([...KP, 'list', '--json', '-f', path], runs)
        const explain = await median([...KP, 'explain', format.explainTarget(services), '-f', path], runs)
        const yard = await median(format.yardstick.argv(path), runs)
        perSize.push({services, list})
        rows.push(
          `| ${format.label} | ${services.toLocaleString('en')} × ${endpointsPerService} | ${gen.lines.toLocaleString('en')} | ${(gen.bytes / 1e6).toFixed(1)} | ${fmt(list)} | ${fmt(explain)} | ${fmt(yard)} | ${pct(list, yard)} | ${pct(explain, yard)} |`,
        )
        if (services === Math.max(...sizes)) {
          checks.push(`- ${format.id} ${services} × ${endpointsPerService}: list --json ${pct(list, yard)} of ${format.yardstick.name} (target ≤ 50 %), explain ${pct(explain, yard)} (target ≤ 15 %), peak memory ${list.maxRssMB ? `${Math.round(Math.max(list.maxRssMB, explain.maxRssMB ?? 0))} MB` : 'n/a'} (target < 600 MB)`)
        }
      }
      if (perSize.length >= 2) {
        const [small, large] = [perSize[0], perSize[perSize.length - 1]]
        if (!small.list.failed && !large.list.failed) {
          const cpu = small.list.cpuSeconds && large.list.cpuSeconds ? `, cpu ${(large.list.cpuSeconds / small.list.cpuSeconds).toFixed(1)}` : ''
          checks.push(`- ${format.id} list --json time ratio ${large.services}/${small.services} services: ${(large.list.seconds / small.list.seconds).toFixed(1)}${cpu} (linear: ${(large.services / small.services).toFixed(1)}; start-up is in both)`)
        }
      }
    }

    const startupRuns = Number(opts['startup-runs'])
    const kpVersion = await median([...KP, '--version'], startupRuns)
    const bareNode = await median([process.execPath, '-e', '0'], startupRuns)
    const table = [
      START,
      '## Latest run',
      '',
      machine(),
      '',
      `| input | services × endpoints | lines | MB | kp list --json | kp explain SVC | yardstick | list / yardstick | explain / yardstick |`,
      `|---|---|---|---|---|---|---|---|---|`,
      ...rows,
      '',
      `Yardstick for iptables-save: \`iptables-restore-translate -f FILE\` (Debian iptables), which reads and translates the whole dump.`,
      '',
      `| start-up (median of ${startupRuns}) | time |`,
      '|---|---|',
      `| \`kp --version\` | ${fmt(kpVersion)} |`,
      `| \`node -e 0\` | ${fmt(bareNode)} |`,
      `| kp's own start-up | ${kpVersion.failed || bareNode.failed ? 'n/a' : `${((kpVersion.seconds - bareNode.seconds) * 1000).toFixed(0)} ms`} |`,
      '',
      'Targets:',
      '',
      ...checks,
      END,
    ].join('\n')
    process.stdout.write(`${table}\n`)
    if (!opts['no-write']) writeDoc(table)
  } finally {
    rmSync(tmp, {recursive: true, force: true})
  }
}

function writeDoc(table) {
  const intro = [
    '# Benchmarks',
    '',
    '`npm run bench` (scripts/bench.mjs) generates kube-proxy-shaped dumps into a temporary folder, runs the built',
    'kp on them, and replaces the section below. Performance is measured here, never by timed tests (DESIGN §6).',
    '',
    'The iptables-save inputs are what `iptables-save` (nf_tables backend) prints for N ClusterIP services with',
    'E endpoints each: kube-proxy\'s rules and chain hashes, the real layout (`-d IP/32 -p tcp -m comment ... -m tcp',
    '--dport`), and the kernel\'s 11-decimal probabilities. Above 1000 endpoints kube-proxy is in "large cluster',
    'mode" and writes no comments on SVC→SEP and SEP rules, so neither do these dumps. A test loads a small one into',
    'a network namespace and checks that iptables-save prints it back unchanged (test/live/bench-generator.test.ts).',
    '',
  ].join('\n')
  let doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : intro
  const a = doc.indexOf(START)
  const b = doc.indexOf(END)
  doc = a >= 0 && b > a ? doc.slice(0, a) + table + doc.slice(b + END.length) : `${doc.trimEnd()}\n\n${table}\n`
  writeFileSync(DOC, doc)
  process.stderr.write(`bench: wrote ${DOC}\n`)
}

await main()
