/**
 * Where the read-only probes run: on this host (runCommand, files under a root) or in a pod on a
 * node of a cluster (src/live/remote/, through `kubectl exec`). src/live/snapshot.ts asks the
 * same questions of both, so a node read through kubectl answers as if kp ran on it.
 */
import {readFile} from 'node:fs/promises'
import {hostname} from 'node:os'
import {type CommandResult, type RunOptions, runCommand} from './exec.js'

export interface ProbeRunner {
  /** Runs one read-only program; never throws for the program's own failure (CommandResult.failure). */
  run(argv: readonly string[], opts: RunOptions): Promise<CommandResult>
  /**
   * Reads files by absolute path ("/proc/net/ip_vs"); null for one that cannot be read. One call
   * for all, so that a remote runner asks once, not once per sysctl.
   */
  readFiles(paths: readonly string[], opts: RunOptions): Promise<Map<string, string | null>>
  /** The node's name for the facts. */
  nodeName(): string | null
  /** The prefix of source paths: `live` here, `node/NAME` through a cluster. */
  readonly label: string
  /** A command line as it is shown in --verbose ("kubectl exec … -- nft …" for a remote node). */
  shown(commandLine: string): string
  /**
   * The kube-proxy image's tool set: no ipvsadm (/proc/net/ip_vs is read instead) and no ip (the
   * rules are read without kube-ipvs0's addresses). On a host, both missing stay exit 4.
   */
  readonly podTools?: boolean
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8')
  } catch {
    return null
  }
}

/** This host; `root` replaces "/" for the file lookups (tests). */
export function localRunner(root = '/'): ProbeRunner {
  return {
    run: (argv, opts) => runCommand(argv, opts),
    async readFiles(paths) {
      const texts = await Promise.all(paths.map((p) => readText(root + p.replace(/^\//, ''))))
      return new Map(paths.map((p, i) => [p, texts[i] ?? null]))
    },
    nodeName: () => hostname().toLowerCase() || null,
    label: 'live',
    shown: (commandLine) => commandLine,
  }
}
