/**
 * The option grammar of iptables rules as the reader knows it: every way of writing an option,
 * how many values it takes, and which field of a rule it fills.
 */
import {KEPT_VALUES} from './rule-store.js'

/** Long option spellings -> the short/canonical ones iptables-save prints. */
export const OPTION_ALIASES: Readonly<Record<string, string>> = {
  '--protocol': '-p',
  '--source': '-s',
  '--src': '-s',
  '--destination': '-d',
  '--dst': '-d',
  '--in-interface': '-i',
  '--out-interface': '-o',
  '--jump': '-j',
  '--goto': '-g',
  '--match': '-m',
  '--set-counters': '-c',
  '--destination-port': '--dport',
  '--source-port': '--sport',
  '--fragment': '-f',
}

/**
 * How many values an option takes, for the options kube-proxy, CNIs and Docker write. A known
 * arity lets a value that starts with `-` (a comment such as `--comment -x`) stay a value.
 * Unknown options take the words up to the next option.
 */
const OPTION_ARITY: Readonly<Record<string, number>> = {
  // flags
  '--rcheck': 0,
  '--set': 0,
  '--reap': 0,
  '--rsource': 0,
  '--rdest': 0,
  '--update': 0,
  '--remove': 0,
  '--random-fully': 0,
  '--random': 0,
  '--persistent': 0,
  '--rttl': 0,
  '--syn': 0,
  '-f': 0,
  '--clamp-mss-to-pmtu': 0,
  '--notrack': 0,
  '--checksum-fill': 0,
  '--log-uid': 0,
  '--physdev-is-bridged': 0,
  '--physdev-is-in': 0,
  '--physdev-is-out': 0,
  '--ipvs': 0,
  // one value
  '-p': 1,
  '-s': 1,
  '-d': 1,
  '-i': 1,
  '-o': 1,
  '--comment': 1,
  '--dport': 1,
  '--sport': 1,
  '--dports': 1,
  '--sports': 1,
  '--ports': 1,
  '--probability': 1,
  '--mode': 1,
  '--every': 1,
  '--packet': 1,
  '--to-destination': 1,
  '--to-source': 1,
  '--to': 1,
  '--to-ports': 1,
  '--mark': 1,
  '--or-mark': 1,
  '--xor-mark': 1,
  '--and-mark': 1,
  '--set-mark': 1,
  '--set-xmark': 1,
  '--name': 1,
  '--seconds': 1,
  '--hitcount': 1,
  '--mask': 1,
  '--ctstate': 1,
  '--state': 1,
  '--ctstatus': 1,
  '--src-type': 1,
  '--dst-type': 1,
  '--nfacct-name': 1,
  '--reject-with': 1,
  '--log-prefix': 1,
  '--log-level': 1,
  '--limit': 1,
  '--limit-burst': 1,
  '--icmp-type': 1,
  '--icmpv6-type': 1,
  '--uid-owner': 1,
  '--gid-owner': 1,
  '--physdev-in': 1,
  '--physdev-out': 1,
  '--src-range': 1,
  '--dst-range': 1,
  '--vaddr': 1,
  '--vport': 1,
  '--vdir': 1,
  '--vproto': 1,
  '--vmethod': 1,
  '--vportctl': 1,
  '--queue-num': 1,
  '--on-port': 1,
  '--on-ip': 1,
  '--tproxy-mark': 1,
  '--set-class': 1,
  '--dscp': 1,
  '--ctorigdst': 1,
  '--ctorigsrc': 1,
  '--ctreplsrc': 1,
  '--ctrepldst': 1,
  '--ctdir': 1,
  '--pkt-type': 1,
  '--ulog-prefix': 1,
  '--nflog-group': 1,
  '--nflog-prefix': 1,
  '--length': 1,
  '--tcp-option': 1,
  // two values
  '--match-set': 2,
  '--tcp-flags': 2,
  '-c': 2,
}

/**
 * Options whose values repeat across many rules (a service's comment is on each of its rules;
 * marks, modes and states are the same on every rule): their values are interned too. Addresses
 * and ports are mostly unique, so interning them would only grow the table.
 */
const REPEATED_VALUES: ReadonlySet<string> = new Set([
  '-p',
  '--comment',
  '--mode',
  '--mark',
  '--ctstate',
  '--state',
  '--dst-type',
  '--src-type',
  '--or-mark',
  '--set-xmark',
  '--set-mark',
  '--match-set',
  '-i',
  '-o',
  '--reject-with',
])

/** What an option fills in the rule, beyond its place in the option lists. */
export const enum Field {
  None,
  Protocol,
  Source,
  Destination,
  InInterface,
  OutInterface,
  Dport,
  Sport,
  Comment,
  Jump,
  Goto,
  Module,
  Counters,
}

const FIELD_OF: Readonly<Record<string, Field>> = {
  '-p': Field.Protocol,
  '-s': Field.Source,
  '-d': Field.Destination,
  '-i': Field.InInterface,
  '-o': Field.OutInterface,
  '--dport': Field.Dport,
  '--sport': Field.Sport,
  '--comment': Field.Comment,
  '-j': Field.Jump,
  '-g': Field.Goto,
  '-m': Field.Module,
  '-c': Field.Counters,
}

/** All the reader needs to know of one way of writing an option, found with one lookup per word. */
export interface OptionSpelling {
  /** The canonical name (`--protocol` is `-p`). */
  name: string
  /** Values it takes; undefined: the words up to the next option. */
  arity: number | undefined
  field: Field
  /** Its values repeat across rules and are interned (REPEATED_VALUES). */
  sharedValues: boolean
  /** Its index in KEPT_VALUES (by name; readPlainAppend checks the place), or -1. */
  kept: number
}

export function spelling(name: string): OptionSpelling {
  return {
    name,
    arity: OPTION_ARITY[name],
    field: FIELD_OF[name] ?? Field.None,
    sharedValues: REPEATED_VALUES.has(name),
    kept: KEPT_VALUES.findIndex((k) => k.name === name),
  }
}

/** Every spelling the tables above name; any other option is looked up once per parse (Shared.unknown). */
export const KNOWN_SPELLINGS: ReadonlyMap<string, OptionSpelling> = new Map([
  ...[...Object.keys(OPTION_ARITY), '-j', '-g', '-m'].map((name): [string, OptionSpelling] => [
    name,
    spelling(name),
  ]),
  ...Object.entries(OPTION_ALIASES).map(([alias, name]): [string, OptionSpelling] => [
    alias,
    spelling(name),
  ]),
])

/** The spellings of nearly every option of a kube-proxy rule, told apart without making the word a string. */
export const COMMON_SPELLINGS: readonly OptionSpelling[] = [
  '-p',
  '-m',
  '-j',
  '-s',
  '-d',
  '--dport',
  '--comment',
  '--mode',
  '--probability',
  '--to-destination',
  '-g',
  '-i',
  '-o',
].map((name) => KNOWN_SPELLINGS.get(name)!)
