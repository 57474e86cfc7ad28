/**
 * The node settings a renderer writes into rules as they are: an interface name, the masquerade
 * mark, an IPVS scheduler, addresses and CIDRs. Each is checked for its kind before it is
 * written, whether it came from a flag or from the source state: otherwise the value lands in the
 * rules as text, and a newline in it is a line of its own (`--local-interface $'eth0\nflush
 * ruleset'` wrote `flush ruleset` into the `nft -f` script; a scheduler `rr\n-C` wrote `-C`, clear
 * every virtual server, into the `ipvsadm-restore` input), while a value that is merely wrong
 * (`10.0.0.0/33`) makes the target tool refuse the whole file.
 */
import {isAddress, isAddressCidr} from '../core/address.js'
import {isNodePortAddressKeyword} from '../kube-proxy/settings.js'
import type {RenderOptions} from './types.js'

/**
 * A network interface name (or the prefix of one) that the renderers can write unquoted: a letter
 * or `_`, then letters, digits, `_`, `.` and `-`, 15 characters at most (Linux's IFNAMSIZ less
 * its NUL). nft would read a leading digit as a number, and `@` as a set; iptables gives `+` its
 * own meaning.
 */
const INTERFACE_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,14}$/

export function isInterfaceName(value: string): boolean {
  return INTERFACE_NAME.test(value)
}

/** A packet mark as rules write it: hex (`0x4000`) or decimal, 1 to 2^32-1. */
export function isMarkValue(value: string): boolean {
  if (!/^(0x[0-9a-fA-F]{1,8}|[1-9][0-9]{0,9})$/.test(value)) return false
  const n = Number(value)
  return n >= 1 && n <= 0xffff_ffff
}

/** The schedulers of the kernel's IPVS (ip_vs_*.ko), what `--scheduler` may name. */
export const IPVS_SCHEDULERS: readonly string[] = [
  'rr',
  'wrr',
  'lc',
  'wlc',
  'lblc',
  'lblcr',
  'dh',
  'sh',
  'sed',
  'nq',
  'fo',
  'ovf',
  'mh',
  'twos',
]

/**
 * A scheduler name as ipvsadm writes one (lowercase letters and digits, 15 at most: the kernel's
 * IP_VS_SCHEDNAME_MAXLEN less its NUL). A source may show one this kp does not list; it is
 * written as it is, since the kernel it came from had it.
 */
export function isSchedulerName(value: string): boolean {
  return /^[a-z][a-z0-9]{0,14}$/.test(value)
}

/** A nodePortAddresses entry: a CIDR, a single address, or a keyword (`primary`, `localhost`, `all`). */
export function isNodePortAddress(value: string): boolean {
  return isNodePortAddressKeyword(value) || isAddressCidr(value) || isAddress(value)
}

/** What each string setting of RenderOptions must be, and the words that say so. */
const CHECKS = {
  podCIDRs: {valid: isAddressCidr, expected: 'a CIDR (10.244.0.0/16, fd00:10:244::/56)'},
  localInterface: {
    valid: isInterfaceName,
    expected: 'an interface name or prefix (a letter or _, then up to 14 of A-Z a-z 0-9 _ . -)',
  },
  masqueradeMark: {
    valid: isMarkValue,
    expected: 'a mark, hex (0x4000) or decimal, from 1 to 2^32-1',
  },
  nodePortAddresses: {
    valid: isNodePortAddress,
    expected: 'a CIDR, an IP address, or primary, localhost, all',
  },
  nodeIPs: {valid: isAddress, expected: 'an IP address'},
  serviceCIDRs: {valid: isAddressCidr, expected: 'a CIDR (10.96.0.0/12, fd00:10:96::/112)'},
  scheduler: {
    valid: (v: string) => IPVS_SCHEDULERS.includes(v),
    expected: `an IPVS scheduler (${IPVS_SCHEDULERS.join(', ')})`,
  },
} satisfies Partial<
  Record<keyof RenderOptions, {valid: (value: string) => boolean; expected: string}>
>

export type CheckedSetting = keyof typeof CHECKS

/** What a value of `setting` must be, in words (for a message about one that is not). */
export function expectedValue(setting: CheckedSetting): string {
  return CHECKS[setting].expected
}

/** Whether `value` is a valid value of `setting`. */
export function isValidSetting(setting: CheckedSetting, value: string): boolean {
  return CHECKS[setting].valid(value)
}

/** The first value of the options that is not of its kind, or null when all are. */
export function invalidRenderOption(
  opts: RenderOptions,
): {setting: CheckedSetting; value: string; expected: string} | null {
  for (const setting of Object.keys(CHECKS) as CheckedSetting[]) {
    const given = opts[setting]
    for (const value of given === undefined ? [] : Array.isArray(given) ? given : [given]) {
      if (!CHECKS[setting].valid(value)) return {setting, value, expected: CHECKS[setting].expected}
    }
  }
  return null
}
