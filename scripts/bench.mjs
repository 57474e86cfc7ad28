#!/usr/bin/env node
// `npm run bench`: kp's wall time and peak memory on generated kube-proxy dumps, beside the
// system tool that reads the same input as a yardstick, plus kp's start-up cost. Prints a
// markdown table and puts it in docs/benchmarks.md (between the bench markers).
//
//   node scripts/bench.mjs [--sizes 1000,10000] [--endpoints 10] [--runs 3] [--comments auto|always]
//                          [--formats iptables-save,iptables-save-comments,iptables-list,nft-text,nft-json,ipvsadm]
//                          [--no-migrate] [--no-write]
//
// Inputs go to a temporary folder (never the repo) that is removed at the end. Formats are
// entries of FORMATS below; `kp migrate` and `kp diff` (issue 4) have their own table after them.
// The nft rows need root and `ip netns`: the generated transaction is loaded into a network
// namespace made for it (and always deleted) so that the real nft prints the list and -j forms.
import {spawn, spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import {cpus, freemem, release, tmpdir, totalmem} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'
import {CLUSTER_IP_BASE, generateIptablesSave, ipv4, serviceName} from './bench/gen-iptables.mjs'
import {generateIpvsadmList} from './bench/gen-ipvsadm.mjs'
import {generateNftTransaction} from './bench/gen-nft.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const KP = [process.execPath, join(ROOT, 'bin/run.js')]
// The single executable (`npm run build:sea`, docs/sea.md): its start-up is measured, built first if missing.
const SEA = join(ROOT, `dist-sea/kp-${process.platform}-${process.arch}`)
const TIME = '/usr/bin/time'
const DOC = join(ROOT, 'docs/benchmarks.md')
const START = '<!-- bench:start -->'
const END = '<!-- bench:end -->'

const USAGE = `usage: node scripts/bench.mjs [--sizes 1000,10000] [--endpoints 10] [--runs 3] [--comments auto|always]
                          [--formats iptables-save,iptables-save-comments,iptables-list,nft-text,nft-json,ipvsadm]
                          [--startup-runs 10] [--single-run-above 60] [--no-migrate] [--no-write]
                          [--startup-only]`
const {values: opts} = parseBenchArgs({
  options: {
    sizes: {type: 'string', default: '1000,10000'},
    endpoints: {type: 'string', default: '10'},
    runs: {type: 'string', default: '3'},
    // auto: kube-proxy's large-cluster mode drops SVC→SEP and SEP comments above 1000 endpoints.
    comments: {type: 'string', default: 'auto'},
    'startup-runs': {type: 'string', default: '10'},
    formats: {
      type: 'string',
      default: 'iptables-save,iptables-save-comments,iptables-list,nft-text,nft-json,ipvsadm',
    },
    'no-migrate': {type: 'boolean', default: false},
    // A measurement whose first run takes longer than this many seconds is not repeated (the
    // 10k nft yardstick alone takes minutes of kernel time on this 2-core machine).
    'single-run-above': {type: 'string', default: '60'},
    'no-write': {type: 'boolean', default: false},
    // Only the start-up table (npm and single-executable \`kp --version\` against \`node -e 0\`),
    // printed and not written: docs/benchmarks.md keeps the last full run's tables.
    'startup-only': {type: 'boolean', default: false},
  },
})

/** parseArgs, with a usage line instead of a stack trace for --help or an option it does not know. */
function parseBenchArgs(config) {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  try {
    return parseArgs(config)
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n${USAGE}\n`)
    process.exit(2)
  }
}

const sizes = opts.sizes.split(',').map(Number)
const endpointsPerService = Number(opts.endpoints)
const runs = Number(opts.runs)
const singleRunAbove = Number(opts['single-run-above'])
const selectedFormats = new Set(opts.formats.split(','))

const explainMiddleService = (services) => {
  const s = serviceName(Math.floor(services / 2))
  return `${s.namespace}/${s.name}:${s.portName}`
}

/** Network namespaces made by this run (`kp-bench-<pid>-<n>`), deleted in every case. */
let netnsCounter = 0
const liveNetns = new Set()
function netnsAdd() {
  const name = `kp-bench-${process.pid}-${++netnsCounter}`
  const r = spawnSync('ip', ['netns', 'add', name], {encoding: 'utf8'})
  if (r.status !== 0) return {error: (r.stderr || String(r.error)).trim()}
  liveNetns.add(name)
  return {name}
}
function netnsDel(name) {
  spawnSync('ip', ['netns', 'del', name])
  liveNetns.delete(name)
}
/** Why the nft rows cannot load rules into a kernel here, or null. */
function netnsUnavailable() {
  if (process.getuid?.() !== 0) return 'not root'
  const ns = netnsAdd()
  if (ns.error) return `ip netns add failed: ${ns.error}`
  netnsDel(ns.name)
  const nft = spawnSync('nft', ['--version'])
  return nft.status === 0 ? null : 'nft is not installed'
}

/** Runs argv (in netns `ns` when given) with stdout to `outPath`; resolves {exitCode, stderr}. */
function runToFile(argv, outPath) {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(outPath)
    const child = spawn(argv[0], argv.slice(1), {stdio: ['ignore', 'pipe', 'pipe']})
    let stderr = ''
    child.stdout.pipe(out)
    child.stderr.on('data', (b) => (stderr += b))
    child.on('error', reject)
    child.on('close', (code) => out.end(() => resolve({exitCode: code, stderr})))
  })
}

const fileStats = (path) => {
  const text = readFileSync(path, 'utf8')
  let lines = 0
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++
  return {lines, bytes: Buffer.byteLength(text)}
}

/**
 * The inputs of one size, made on first use and shared between the rows: the iptables-save
 * dump, kube-proxy's nft transaction for the same services, and (loaded into a namespace) what
 * `nft list table ip kube-proxy` and `nft -j list table ip kube-proxy` print for it.
 */
function inputsOf(tmp, services, endpoints, netnsReason) {
  const base = join(tmp, `${services}x${endpoints}`)
  const cache = new Map()
  const once = (key, make) => {
    if (!cache.has(key)) cache.set(key, make())
    return cache.get(key)
  }
  const iptables = () =>
    once('iptables', async () => {
      const path = `${base}-iptables-save.txt`
      return {
        path,
        ...(await generateIptablesSave(path, {
          services,
          endpointsPerService: endpoints,
          comments: opts.comments,
        })),
      }
    })
  // The same services with every comment kept, whatever their number: a node below kube-proxy's
  // 1,000-endpoint threshold (or a release before it) scaled up; issue 2 describes this 47 MB form.
  const iptablesCommented = () =>
    once('iptables-commented', async () => {
      const path = `${base}-iptables-save-comments.txt`
      return {
        path,
        ...(await generateIptablesSave(path, {
          services,
          endpointsPerService: endpoints,
          comments: 'always',
        })),
      }
    })
  const transaction = () =>
    once('transaction', async () => {
      const path = `${base}-nft-transaction.nft`
      return {
        path,
        ...(await generateNftTransaction(path, {services, endpointsPerService: endpoints})),
      }
    })
  const kernelListings = () =>
    once('listings', async () => {
      if (netnsReason) return {error: netnsReason}
      const tx = await transaction()
      const ns = netnsAdd()
      if (ns.error) return {error: ns.error}
      try {
        const started = Date.now()
        const load = spawnSync('ip', ['netns', 'exec', ns.name, 'nft', '-f', tx.path], {
          encoding: 'utf8',
        })
        if (load.status !== 0)
          return {error: `nft -f exited ${load.status}: ${load.stderr.trim().split('\n')[0]}`}
        const text = `${base}-nft-list.nft`
        const json = `${base}-nft-list.json`
        for (const [argv, path] of [
          [['nft', 'list', 'table', 'ip', 'kube-proxy'], text],
          [['nft', '-j', 'list', 'table', 'ip', 'kube-proxy'], json],
        ]) {
          const r = await runToFile(['ip', 'netns', 'exec', ns.name, ...argv], path)
          if (r.exitCode !== 0)
            return {
              error: `${argv.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n')[0]}`,
            }
        }
        process.stderr.write(
          `bench: loaded and listed ${services}×${endpoints} nft rules in a namespace in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
        )
        return {text: {path: text, ...fileStats(text)}, json: {path: json, ...fileStats(json)}}
      } finally {
        netnsDel(ns.name)
      }
    })
  // What `iptables -L -n -v` prints for the iptables-save dump: the dump loaded into a namespace
  // and listed, nat then filter. With the legacy backend: iptables-nft restored and listed 1,000
  // services 3 and 8 times slower here, and both print the same listing.
  const iptablesListing = () =>
    once('iptables-list', async () => {
      const save = await iptables()
      // Loading 10,000 services and listing them takes minutes: the listing is kept in the
      // gitignored bench-out/cache/, named by the save dump it lists (delete it to list again).
      const digest = createHash('sha256').update(readFileSync(save.path)).digest('hex').slice(0, 16)
      const cached = join(
        ROOT,
        'bench-out',
        'cache',
        `iptables-L-n-v.${services}x${endpoints}.${digest}.txt`,
      )
      if (existsSync(cached)) {
        process.stderr.write(`bench: the iptables -L -n -v listing from ${cached}\n`)
        return {path: cached, ...fileStats(cached)}
      }
      if (netnsReason) return {error: netnsReason}
      const ns = netnsAdd()
      if (ns.error) return {error: ns.error}
      try {
        const started = Date.now()
        const load = spawnSync(
          'sh',
          ['-c', `ip netns exec ${ns.name} iptables-legacy-restore < "${save.path}"`],
          {encoding: 'utf8'},
        )
        if (load.status !== 0)
          return {
            error: `iptables-legacy-restore exited ${load.status}: ${load.stderr.trim().split('\n')[0]}`,
          }
        const path = `${base}-iptables-L-n-v.txt`
        const out = createWriteStream(path)
        for (const table of ['nat', 'filter']) {
          const part = `${path}.${table}`
          const argv = ['iptables-legacy', '-t', table, '-L', '-n', '-v']
          const r = await runToFile(['ip', 'netns', 'exec', ns.name, ...argv], part)
          if (r.exitCode !== 0)
            return {
              error: `${argv.join(' ')} exited ${r.exitCode}: ${r.stderr.trim().split('\n')[0]}`,
            }
          out.write(readFileSync(part))
          if (table === 'nat') out.write('\n')
          rmSync(part)
        }
        await new Promise((resolve) => out.end(resolve))
        process.stderr.write(
          `bench: loaded and listed ${services}×${endpoints} iptables rules in a namespace in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
        )
        mkdirSync(join(ROOT, 'bench-out', 'cache'), {recursive: true})
        copyFileSync(path, cached)
        return {path, ...fileStats(path)}
      } finally {
        netnsDel(ns.name)
      }
    })
  const ipvsadm = () =>
    once('ipvsadm', async () => {
      const path = `${base}-ipvsadm-Ln.txt`
      return {
        path,
        ...(await generateIpvsadmList(path, {services, endpointsPerService: endpoints})),
      }
    })
  return {iptables, iptablesCommented, iptablesListing, transaction, kernelListings, ipvsadm}
}

/** `nft -c -f FILE` needs a namespace to check against: one per measurement, deleted after. */
async function inNetns(argvOf, measureIt) {
  const ns = netnsAdd()
  if (ns.error) return {failed: ns.error}
  try {
    return await measureIt(['ip', 'netns', 'exec', ns.name, ...argvOf])
  } finally {
    netnsDel(ns.name)
  }
}

/**
 * One entry per input format. `generate(path, services, endpoints)` writes a dump;
 * `yardstick(path)` is the argv of a system tool that reads the same dump in full;
 * `explainTarget(services)` names one service for `kp explain`.
 */
const FORMATS = [
  {
    id: 'iptables-save',
    label: `iptables-save (nf_tables layout${opts.comments === 'always' ? ', comments kept' : ''})`,
    input: (inputs) => inputs.iptables(),
    // A few seconds a run: measured by turns with each kp command (paired()), not once for the row.
    yardstick: {name: 'iptables-restore-translate -f'},
    pairedYardstick: async (inputs) => [
      'iptables-restore-translate',
      '-f',
      (await inputs.iptables()).path,
    ],
    explainTarget: explainMiddleService,
  },
  {
    id: 'iptables-save-comments',
    label: 'iptables-save (nf_tables layout, comments kept on every rule)',
    input: (inputs) => inputs.iptablesCommented(),
    yardstick: {name: 'iptables-restore-translate -f'},
    pairedYardstick: async (inputs) => [
      'iptables-restore-translate',
      '-f',
      (await inputs.iptablesCommented()).path,
    ],
    explainTarget: explainMiddleService,
  },
  {
    id: 'iptables-list',
    label: '`iptables -L -n -v` listing (nat and filter) of the iptables-save dump',
    input: (inputs) => inputs.iptablesListing(),
    // The yardstick reads the save form of the same rules: no tool reads a listing.
    yardstick: {name: 'iptables-restore-translate -f (the save form)'},
    pairedYardstick: async (inputs) => [
      'iptables-restore-translate',
      '-f',
      (await inputs.iptables()).path,
    ],
    explainTarget: explainMiddleService,
  },
  {
    id: 'nft-text',
    label: '`nft list table ip kube-proxy` text',
    input: async (inputs) =>
      (await inputs.kernelListings()).text ?? {error: (await inputs.kernelListings()).error},
    // kube-proxy's own transaction, checked by nft against an empty namespace (changes nothing).
    yardstick: {
      name: 'nft -c -f (kube-proxy transaction, in a namespace)',
      run: async (inputs, n) =>
        inNetns(['nft', '-c', '-f', (await inputs.transaction()).path], (argv) => median(argv, n)),
    },
    explainTarget: explainMiddleService,
  },
  {
    id: 'nft-json',
    label: '`nft -j list table ip kube-proxy` JSON',
    input: async (inputs) =>
      (await inputs.kernelListings()).json ?? {error: (await inputs.kernelListings()).error},
    yardstick: {name: 'nft -c -f (kube-proxy transaction, in a namespace)', shared: 'nft-text'},
    explainTarget: explainMiddleService,
  },
  {
    id: 'ipvsadm',
    label: '`ipvsadm -Ln` listing (no ipset, no cluster objects)',
    input: (inputs) => inputs.ipvsadm(),
    // There is no tool here that parses an ipvsadm listing (ipvsadm only reads the kernel), so
    // the row compares with `wc -l`, the floor of reading the file at all; no target applies.
    yardstick: {
      name: 'wc -l (a floor, not a parser)',
      run: async (inputs, n) => median(['wc', '-l', (await inputs.ipvsadm()).path], n),
      noTarget: true,
    },
    // An ipvsadm listing has no service names: a virtual server is named by its address.
    explainTarget: (services) => `${ipv4(CLUSTER_IP_BASE + Math.floor(services / 2))}:80`,
  },
  // With --comments always the first row already keeps them.
].filter(
  (f) =>
    selectedFormats.has(f.id) && !(f.id === 'iptables-save-comments' && opts.comments === 'always'),
)

const hasTime = existsSync(TIME)

/** Runs argv with stdout discarded; resolves {seconds, maxRssMB, exitCode, stderr}. */
function measure(argv) {
  const full = hasTime ? [TIME, '-f', '__kp_bench__ %e %M %U %S', ...argv] : argv
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(full[0], full.slice(1), {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {...process.env, NO_COLOR: '1'},
    })
    let stderr = ''
    child.stderr.on('data', (b) => (stderr += b))
    child.on('error', reject)
    child.on('close', (code) => {
      const wall = Number(process.hrtime.bigint() - started) / 1e9
      const m = /__kp_bench__ ([\d.]+) (\d+) ([\d.]+) ([\d.]+)/.exec(stderr)
      // time(1) exits with the command's status and adds a line saying so; drop both marker lines.
      const text = stderr.replace(
        /^(__kp_bench__ .*|Command exited with non-zero status \d+)\n?/gm,
        '',
      )
      resolve({
        seconds: m ? Number(m[1]) : wall,
        cpuSeconds: m ? Number(m[3]) + Number(m[4]) : null,
        maxRssMB: m ? Number(m[2]) / 1024 : null,
        exitCode: code,
        stderr: text,
      })
    })
  })
}

/** Median of n runs; okExits are the exit codes that count as success (kp diff exits 1 on a difference). */
async function median(argv, n, okExits = [0]) {
  const results = []
  for (let i = 0; i < n; i++) {
    const r = await measure(argv)
    if (!okExits.includes(r.exitCode))
      return {failed: `exit ${r.exitCode}: ${r.stderr.trim().split('\n')[0] ?? ''}`}
    results.push(r)
    if (i === 0 && r.seconds > singleRunAbove) break
  }
  return summary(results)
}

/** The median run's wall and CPU time, the largest peak memory, of measure() results. */
function summary(results) {
  const sorted = [...results].sort((a, b) => a.seconds - b.seconds)
  const mid = sorted[Math.floor(sorted.length / 2)]
  const cpu = results
    .map((r) => r.cpuSeconds)
    .filter((c) => c !== null)
    .sort((a, b) => a - b)
  return {
    seconds: mid.seconds,
    cpuSeconds: cpu.length ? cpu[Math.floor(cpu.length / 2)] : null,
    maxRssMB: Math.max(...results.map((r) => r.maxRssMB ?? 0)) || null,
    runs: results.length,
    exitCode: results[0].exitCode,
  }
}

const middle = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * kp and its yardstick by turns, n runs each (kp, yardstick, kp, yardstick, ...): the load of
 * this shared VM drifts over minutes, and a kp run is compared with the yardstick run next to
 * it, not with one made minutes apart. Resolves {kp, yard: summary() of each side's runs,
 * ratio, cpuRatio: the median of the n per-pair ratios}, or {failed}.
 */
async function paired(kpArgv, yardArgv, n, okExits = [0]) {
  const kp = []
  const yard = []
  for (let i = 0; i < n; i++) {
    const k = await measure(kpArgv)
    if (!okExits.includes(k.exitCode))
      return {failed: `exit ${k.exitCode}: ${k.stderr.trim().split('\n')[0] ?? ''}`}
    const y = await measure(yardArgv)
    if (y.exitCode !== 0)
      return {failed: `yardstick exit ${y.exitCode}: ${y.stderr.trim().split('\n')[0] ?? ''}`}
    kp.push(k)
    yard.push(y)
  }
  const cpu = kp.every((k, i) => k.cpuSeconds && yard[i].cpuSeconds)
  return {
    kp: summary(kp),
    yard: summary(yard),
    yardRuns: yard,
    ratio: middle(kp.map((k, i) => k.seconds / yard[i].seconds)),
    cpuRatio: cpu ? middle(kp.map((k, i) => k.cpuSeconds / yard[i].cpuSeconds)) : null,
  }
}

/** A paired() result as a percentage: the median of the per-pair ratios. */
const pairedPct = (p) =>
  p.failed
    ? 'n/a'
    : `${Math.round(100 * p.ratio)} %${p.cpuRatio !== null ? ` (cpu ${Math.round(100 * p.cpuRatio)} %)` : ''}`

const fmt = (r) =>
  r.failed
    ? `failed (${r.failed})`
    : `${r.seconds.toFixed(2)} s${r.cpuSeconds !== null ? ` (cpu ${r.cpuSeconds.toFixed(2)} s)` : ''}${r.maxRssMB ? `, ${Math.round(r.maxRssMB)} MB` : ''}${r.runs < runs ? ` [${r.runs} run]` : ''}`
// Wall time, and CPU time (user + sys), which a busy machine disturbs less.
const pct = (a, b) =>
  a.failed || b.failed
    ? 'n/a'
    : `${Math.round((100 * a.seconds) / b.seconds)} %${a.cpuSeconds && b.cpuSeconds ? ` (cpu ${Math.round((100 * a.cpuSeconds) / b.cpuSeconds)} %)` : ''}`

function machine() {
  const model = cpus()[0]?.model ?? 'unknown CPU'
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  return [
    `- date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `- machine: ${cpus().length} × ${model}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM (${(freemem() / 2 ** 30).toFixed(1)} GiB free at start), Linux ${release()}`,
    `- node ${process.version}; load average at the end: ${load} (other work on the machine makes times noisier)`,
    `- timing: ${hasTime ? '`/usr/bin/time -f "%e %M %U %S"` (wall seconds, peak RSS, user + sys CPU seconds)' : 'wall clock only (/usr/bin/time is missing: apt-get install time)'}; median of ${runs} runs, peak memory the largest of them; a command whose first run takes over ${singleRunAbove} s is run once (marked [1 run])`,
    `- against iptables-restore-translate, each kp command and the yardstick run by turns (kp, yardstick, kp, ...: ${runs} each); the percentage is the median of the ${runs} per-pair ratios, the yardstick column the median of all its runs in that row. The machine's load drifts over minutes; a kp run is compared with the yardstick run next to it`,
  ].join('\n')
}

/**
 * Start-up: `kp --version` of the npm build and of the single executable against `node -e 0`,
 * by turns (npm, sea, node, npm, ...), wall time by the clock (time(1) counts in 10 ms steps, a
 * tenth of what is measured here); each ratio is the median of the per-turn ratios.
 */
async function startupSection(n) {
  if (!existsSync(SEA)) {
    // npm run bench builds the npm package only; the single executable takes ~10 s more.
    process.stderr.write('bench: building the single executable (npm run build:sea)\n')
    spawnSync(process.execPath, [join(ROOT, 'scripts/build-sea.mjs')], {stdio: 'inherit'})
  }
  const sea = existsSync(SEA) ? [SEA, '--version'] : null
  const seaVersion = sea ? spawnSync(SEA, ['--version'], {encoding: 'utf8'}).stdout.trim() : ''
  const argvs = {npm: [...KP, '--version'], sea, node: [process.execPath, '-e', '0']}
  const ms = {npm: [], sea: [], node: []}
  for (let i = 0; i < n; i++) {
    for (const [name, argv] of Object.entries(argvs)) {
      if (!argv) continue
      const r = await wallOf(argv)
      if (r.exitCode !== 0) throw new Error(`${argv.join(' ')}: exit ${r.exitCode}`)
      ms[name].push(r.ms)
    }
  }
  const ratio = (name) => middle(ms[name].map((t, i) => t / ms.node[i]))
  const cell = (name) => `${middle(ms[name]).toFixed(0)} ms`
  const seaCell = sea ? cell('sea') : 'not built (`npm run build:sea` failed)'
  return {
    rows: [
      `| start-up (median of ${n}, by turns) | wall time | / \`node -e 0\` |`,
      '|---|---|---|',
      `| \`kp --version\` (npm: bin/run.js) | ${cell('npm')} | ${ratio('npm').toFixed(2)} × |`,
      `| \`kp-${process.platform}-${process.arch} --version\` (single executable) | ${seaCell} | ${sea ? `${ratio('sea').toFixed(2)} ×` : '-'} |`,
      `| \`node -e 0\` | ${cell('node')} | 1 × |`,
    ],
    checks: [
      `- start-up: npm \`kp --version\` ${ratio('npm').toFixed(2)} × \`node -e 0\` (target ≤ 2.5 ×)`,
      sea
        ? `- start-up: single executable \`--version\` ${ratio('sea').toFixed(2)} × \`node -e 0\` (target ≤ 1.5 ×; ${seaVersion})`
        : '- start-up: single executable not measured: `npm run build:sea` failed',
    ],
  }
}

/** One run's wall time in ms by the clock, output discarded. */
function wallOf(argv) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(argv[0], argv.slice(1), {cwd: ROOT, stdio: 'ignore'})
    child.on('error', reject)
    child.on('close', (code) =>
      resolve({exitCode: code, ms: Number(process.hrtime.bigint() - started) / 1e6}),
    )
  })
}

async function main() {
  if (opts['startup-only']) {
    const startup = await startupSection(Number(opts['startup-runs']))
    process.stdout.write(`${[...startup.rows, '', ...startup.checks].join('\n')}\n`)
    return
  }
  if (!existsSync(join(ROOT, 'dist/commands/list.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm run bench does)')
  const tmp = mkdtempSync(join(tmpdir(), 'kp-bench-'))
  const rows = []
  const checks = []
  const issue4Rows = []
  const humanRows = []
  const traceRows = []
  const netnsReason =
    FORMATS.some((f) => f.id.startsWith('nft') || f.id === 'iptables-list') || !opts['no-migrate']
      ? netnsUnavailable()
      : null
  if (netnsReason) process.stderr.write(`bench: no nft rows from the kernel: ${netnsReason}\n`)
  const inputsBySize = new Map(
    sizes.map((n) => [n, inputsOf(tmp, n, endpointsPerService, netnsReason)]),
  )
  const yardsticks = new Map() // `${format id}:${services}` -> result, for yardsticks shared between rows
  const progress = (what, r) => process.stderr.write(`bench:   ${what}: ${fmt(r)}\n`)
  try {
    for (const format of FORMATS) {
      const perSize = []
      for (const services of sizes) {
        const inputs = inputsBySize.get(services)
        const gen = await format.input(inputs)
        const size = `${services.toLocaleString('en')} × ${endpointsPerService}`
        if (gen.error) {
          rows.push(`| ${format.label} | ${size} | - | - | not run: ${gen.error} | | | | |`)
          continue
        }
        process.stderr.write(
          `bench: ${format.id} ${services}×${endpointsPerService}: ${gen.lines} lines, ${(gen.bytes / 1e6).toFixed(1)} MB\n`,
        )
        const listArgv = [...KP, 'list', '--json', '-f', gen.path]
        const explainArgv = [...KP, 'explain', format.explainTarget(services), '-f', gen.path]
        let list, explain, yard, listPct, explainPct
        if (format.pairedYardstick) {
          const yardArgv = await format.pairedYardstick(inputs)
          const listPair = await paired(listArgv, yardArgv, runs)
          const explainPair = await paired(explainArgv, yardArgv, runs)
          list = listPair.failed ? listPair : listPair.kp
          explain = explainPair.failed ? explainPair : explainPair.kp
          progress('kp list --json', list)
          progress('kp explain', explain)
          const yardRuns = [...(listPair.yardRuns ?? []), ...(explainPair.yardRuns ?? [])]
          yard = yardRuns.length ? summary(yardRuns) : {failed: 'no yardstick run'}
          ;[listPct, explainPct] = [pairedPct(listPair), pairedPct(explainPair)]
        } else {
          list = await median(listArgv, runs)
          progress('kp list --json', list)
          explain = await median(explainArgv, runs)
          progress('kp explain', explain)
          const yardKey = `${format.yardstick.shared ?? format.id}:${services}`
          if (!yardsticks.has(yardKey))
            yardsticks.set(yardKey, await format.yardstick.run(inputs, runs))
          yard = yardsticks.get(yardKey)
          ;[listPct, explainPct] = format.yardstick.noTarget
            ? ['(no yardstick)', '(no yardstick)']
            : [pct(list, yard), pct(explain, yard)]
        }
        progress(format.yardstick.name, yard)
        perSize.push({services, list})
        if (format.id === 'iptables-save' && services === Math.max(...sizes)) {
          // kp trace (issue 24 §2): one connection to the middle service's ClusterIP, walked from
          // a focused read; its target is absolute (≤ 0.5 s), the yardstick is for scale.
          const traceTarget = `${ipv4(CLUSTER_IP_BASE + Math.floor(services / 2))}:80`
          const tracePair = await paired(
            [...KP, 'trace', traceTarget, '-f', gen.path],
            await format.pairedYardstick(inputs),
            runs,
          )
          const trace = tracePair.failed ? tracePair : tracePair.kp
          progress('kp trace', trace)
          traceRows.push(
            `| \`kp trace ${traceTarget}\` | ${format.label} | ${size} | ${fmt(trace)} | ${tracePair.failed ? '-' : fmt(tracePair.yard)} | ${pairedPct(tracePair)} |`,
          )
          checks.push(
            `- trace ${services} × ${endpointsPerService}: ${trace.failed ? 'failed' : `${trace.seconds.toFixed(2)} s${trace.cpuSeconds !== null ? ` (cpu ${trace.cpuSeconds.toFixed(2)} s)` : ''}`} (target ≤ 0.5 s), ${pairedPct(tracePair)} of iptables-restore-translate -f`,
          )
          // The tables a person reads: no target, but a table layout that costs minutes shows here.
          for (const wide of [false, true]) {
            const argv = [...KP, 'list', ...(wide ? ['-o', 'wide'] : []), '-f', gen.path]
            const r = await median(argv, runs)
            progress(`kp list${wide ? ' -o wide' : ''}`, r)
            humanRows.push(
              `| \`kp list${wide ? ' -o wide' : ''}\` (a table) | ${format.label} | ${size} | ${fmt(r)} | ${fmt(list)} |`,
            )
          }
        }
        rows.push(
          `| ${format.label} | ${size} | ${gen.lines.toLocaleString('en')} | ${(gen.bytes / 1e6).toFixed(1)} | ${fmt(list)} | ${fmt(explain)} | ${fmt(yard)} | ${listPct} | ${explainPct} |`,
        )
        if (services === Math.max(...sizes)) {
          const peak = `peak memory ${list.maxRssMB ? `${Math.round(Math.max(list.maxRssMB, explain.maxRssMB ?? 0))} MB` : 'n/a'} (target < 600 MB)`
          checks.push(
            format.yardstick.noTarget
              ? `- ${format.id} ${services} × ${endpointsPerService}: no yardstick tool reads this format here (absolute times above), ${peak}`
              : `- ${format.id} ${services} × ${endpointsPerService}: list --json ${listPct} of ${format.yardstick.name} (target ≤ 50 %), explain ${explainPct} (target ≤ 15 %), ${peak}`,
          )
        }
      }
      if (perSize.length >= 2) {
        const [small, large] = [perSize[0], perSize[perSize.length - 1]]
        if (!small.list.failed && !large.list.failed) {
          const cpu =
            small.list.cpuSeconds && large.list.cpuSeconds
              ? `, cpu ${(large.list.cpuSeconds / small.list.cpuSeconds).toFixed(1)}`
              : ''
          checks.push(
            `- ${format.id} list --json time ratio ${large.services}/${small.services} services: ${(large.list.seconds / small.list.seconds).toFixed(1)}${cpu} (linear: ${(large.services / small.services).toFixed(1)}; start-up is in both)`,
          )
        }
      }
    }

    // Issue 4: migrate an iptables dump to nftables, and diff it against the nft dump of the same
    // services, beside iptables-restore-translate (the system's own iptables → nft translation).
    if (!opts['no-migrate']) {
      const issue4PerSize = []
      for (const services of sizes) {
        const inputs = inputsBySize.get(services)
        const ipt = await inputs.iptables()
        const listed = await inputs.kernelListings()
        const nft = listed.text ?? (await inputs.transaction())
        const nftForm = listed.text ? '`nft list` text' : 'kube-proxy transaction'
        const size = `${services.toLocaleString('en')} × ${endpointsPerService}`
        process.stderr.write(`bench: migrate/diff ${services}×${endpointsPerService}\n`)
        const out = join(tmp, `${services}x${endpointsPerService}-migrated.nft`)
        const yardArgv = ['iptables-restore-translate', '-f', ipt.path]
        const migratePair = await paired(
          [...KP, 'migrate', '--to', 'nftables', '-f', ipt.path, '--out', out],
          yardArgv,
          runs,
        )
        const migrate = migratePair.failed ? migratePair : migratePair.kp
        progress('kp migrate', migrate)
        const migrated = migrate.failed ? null : fileStats(out)
        // kp diff exits 1 when the two states differ; both are results, not failures.
        const diffPair = await paired([...KP, 'diff', ipt.path, nft.path], yardArgv, runs, [0, 1])
        const diff = diffPair.failed ? diffPair : diffPair.kp
        progress('kp diff', diff)
        const summaryText = diff.failed ? '' : summaryOf([...KP, 'diff', ipt.path, nft.path])
        const yardRuns = [...(migratePair.yardRuns ?? []), ...(diffPair.yardRuns ?? [])]
        const yard = yardRuns.length ? summary(yardRuns) : {failed: 'no yardstick run'}
        progress('iptables-restore-translate -f', yard)
        issue4PerSize.push({services, migrate, diff})
        if (services === Math.max(...sizes)) {
          const mb = (r) => (r.maxRssMB ? `${Math.round(r.maxRssMB)} MB` : 'n/a')
          checks.push(
            `- migrate ${services} × ${endpointsPerService}: ${pairedPct(migratePair)} of iptables-restore-translate -f, peak memory ${mb(migrate)} (target < 600 MB)`,
          )
          checks.push(
            `- diff ${services} × ${endpointsPerService}: ${pairedPct(diffPair)} of iptables-restore-translate -f (which reads one of its two inputs), peak memory ${mb(diff)} (target < 600 MB)`,
          )
        }
        issue4Rows.push(
          `| \`kp migrate --to nftables --out FILE\` | ${size} | ${ipt.lines.toLocaleString('en')} iptables-save lines → ${migrated ? `${migrated.lines.toLocaleString('en')} nft lines` : '-'} | ${fmt(migrate)} | ${fmt(yard)} | ${pairedPct(migratePair)} |`,
          `| \`kp diff\` iptables-save vs ${nftForm} | ${size} | ${ipt.lines.toLocaleString('en')} + ${nft.lines.toLocaleString('en')} lines; exit ${diff.failed ? '-' : diff.exitCode}${summaryText ? `: ${summaryText}` : ''} | ${fmt(diff)} | ${fmt(yard)} | ${pairedPct(diffPair)} |`,
        )
      }
      if (issue4PerSize.length >= 2) {
        const [small, large] = [issue4PerSize[0], issue4PerSize[issue4PerSize.length - 1]]
        for (const cmd of ['migrate', 'diff']) {
          if (small[cmd].failed || large[cmd].failed) continue
          const cpu =
            small[cmd].cpuSeconds && large[cmd].cpuSeconds
              ? `, cpu ${(large[cmd].cpuSeconds / small[cmd].cpuSeconds).toFixed(1)}`
              : ''
          checks.push(
            `- ${cmd} time ratio ${large.services}/${small.services} services: ${(large[cmd].seconds / small[cmd].seconds).toFixed(1)}${cpu} (linear: ${(large.services / small.services).toFixed(1)})`,
          )
        }
      }
    }

    const startup = await startupSection(Number(opts['startup-runs']))
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
      `Yardsticks: iptables-save, \`iptables-restore-translate -f FILE\` (Debian iptables), which reads and translates the whole dump; nft text and JSON, \`nft -c -f\` on kube-proxy's own transaction for the same services inside an empty network namespace (check mode: the kernel validates the whole batch and commits nothing; it is one number for both nft rows; its kernel time grows much faster than the input: compare the 1,000 and 10,000 rows); ipvsadm, none: no tool parses an \`ipvsadm -Ln\` listing (ipvsadm reads only the kernel), so \`wc -l\` shows the cost of merely reading the file; the \`iptables -L -n -v\` listing, \`iptables-restore-translate -f\` on the save form of the same rules (no tool reads a listing).`,
      '',
      ...(issue4Rows.length
        ? [
            '### migrate and diff (issue 4)',
            '',
            '| command | services × endpoints | input → output | kp | iptables-restore-translate -f (same iptables input) | kp / yardstick |',
            '|---|---|---|---|---|---|',
            ...issue4Rows,
          ]
        : []),
      '',
      ...(humanRows.length
        ? [
            '| human output | input | services × endpoints | kp | kp list --json, same input |',
            '|---|---|---|---|---|',
            ...humanRows,
            '',
          ]
        : []),
      ...(traceRows.length
        ? [
            '| kp trace | input | services × endpoints | kp | iptables-restore-translate -f | kp / yardstick |',
            '|---|---|---|---|---|---|',
            ...traceRows,
            '',
          ]
        : []),
      ...startup.rows,
      '',
      'Targets:',
      '',
      ...checks,
      ...startup.checks,
      END,
    ].join('\n')
    process.stdout.write(`${table}\n`)
    if (!opts['no-write']) writeDoc(table)
  } finally {
    for (const name of [...liveNetns]) netnsDel(name)
    rmSync(tmp, {recursive: true, force: true})
  }
}

/** The last line of kp diff's text report ("Service ports: 0 changed, …"). */
function summaryOf(argv) {
  const r = spawnSync(argv[0], argv.slice(1), {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    env: {...process.env, NO_COLOR: '1'},
  })
  const last = (r.stdout ?? '').trim().split('\n').pop() ?? ''
  return last.replace(/\|/g, '\\|')
}

function writeDoc(table) {
  const intro = [
    '# Benchmarks',
    '',
    '`npm run bench` (scripts/bench.mjs) generates kube-proxy-shaped dumps into a temporary folder, runs the built',
    'kp on them, and replaces the section below. Performance is measured here, never by timed tests (docs/architecture.md, "Tests").',
    '',
    'The iptables-save inputs are what `iptables-save` (nf_tables backend) prints for N ClusterIP services with',
    "E endpoints each: kube-proxy's rules and chain hashes, the real layout (`-d IP/32 -p tcp -m comment ... -m tcp",
    '--dport`), and the kernel\'s 11-decimal probabilities. Above 1000 endpoints kube-proxy is in "large cluster',
    'mode" and writes no comments on SVC→SEP and SEP rules, so neither do these dumps. A test loads a small one into',
    'a network namespace and checks that iptables-save prints it back unchanged (test/live/bench-generator.test.ts).',
    'The nft rows are the same services as kube-proxy writes them in nftables mode, loaded into a namespace and',
    'listed back by the real nft (text and -j); the ipvsadm row is their `ipvsadm -Ln` listing.',
    '',
  ].join('\n')
  let doc = existsSync(DOC) ? readFileSync(DOC, 'utf8') : intro
  const a = doc.indexOf(START)
  const b = doc.indexOf(END)
  doc =
    a >= 0 && b > a
      ? doc.slice(0, a) + table + doc.slice(b + END.length)
      : `${doc.trimEnd()}\n\n${table}\n`
  writeFileSync(DOC, doc)
  process.stderr.write(`bench: wrote ${DOC}\n`)
}

await main()
