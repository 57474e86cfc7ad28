/**
 * Redaction placeholders: what people put in place of an address before pasting a dump into a
 * ticket (issue 21 §1). Such a value is no damage: the rest of its line was read, only the address
 * is hidden. It is kept as "redacted" (a null address), never as an address, and never as an
 * error. The patterns are a closed list, documented in README "Partial and redacted input":
 *
 * 1. IPv4 with masked octets: each octet digits, or one to three `x`/`X`/`*`, at least one masked
 *    (`x.x.x.x`, `10.x.x.x`, `192.168.*.*`, `10.0.XXX.1`);
 * 2. IPv6 with masked groups: hex groups and `::`, at least one group of only `x`/`X`
 *    (`xxxx:xxxx::x`, `fd00::xxxx`);
 * 3. a name in angle brackets, square brackets or braces: `<IP>`, `<node-ip>`, `[REDACTED]`,
 *    `{{ pod_ip }}`;
 * 4. a redaction word, alone or joined to a name with `_`/`-`: REDACTED, HIDDEN, MASKED, REMOVED,
 *    ANONYMIZED/ANONYMISED, SCRUBBED, any case (`REDACTED`, `redacted_ip`, `IP-REDACTED`);
 * 5. runs of `x`/`X` or `*` (at least two): `XXX`, `xxxx`, `***`.
 *
 * A `/prefix` after a placeholder (`x.x.x.x/32`) belongs to it.
 */

/** How a redacted address is shown to people, in tables, explanations and diffs. */
export const REDACTED_SHOWN = '<redacted>'

const MASKED_IPV4 = /^(?:\d{1,3}|[xX*]{1,3})(?:\.(?:\d{1,3}|[xX*]{1,3})){3}$/
const MASKED_IPV6 = /^[0-9a-fA-FxX:]+$/
const BRACKETED = /^(?:<[^<>]+>|\[[^[\]:]+\]|\{+[^{}]+\}+)$/
const WORD =
  /^(?:[A-Za-z0-9]+[_-])*(?:redacted|hidden|masked|removed|anonymi[sz]ed|scrubbed)(?:[_-][A-Za-z0-9]+)*$/i
const RUN = /^(?:[xX]{2,}|\*{2,})$/

function isMaskedIpv4(value: string): boolean {
  return MASKED_IPV4.test(value) && /[xX*]/.test(value)
}

function isMaskedIpv6(value: string): boolean {
  if (!value.includes(':') || !MASKED_IPV6.test(value)) return false
  return value.split(':').some((group) => /^[xX]+$/.test(group))
}

/** Whether a value where an address (or CIDR) belongs is a redaction placeholder. */
export function isRedacted(value: string): boolean {
  const text = value.trim()
  const slash = text.lastIndexOf('/')
  const bare = slash > 0 && /^\d{1,3}$/.test(text.slice(slash + 1)) ? text.slice(0, slash) : text
  if (bare.length === 0 || bare.length > 64) return false
  return (
    isMaskedIpv4(bare) ||
    isMaskedIpv6(bare) ||
    BRACKETED.test(bare) ||
    WORD.test(bare) ||
    RUN.test(bare)
  )
}
