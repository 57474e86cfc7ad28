/**
 * The match and target text of one `iptables -L` rule (what follows the destination column: the
 * comment between its slash-star marks, `tcp dpt:80`, `statistic mode random probability 0.5`,
 * `tcp to:10.244.1.5:8080`, `MARK or 0x4000`, ...) translated back to the options
 * iptables-save writes for it. Each extension's print function (iptables' extensions/libxt_*.c)
 * decides the words; only those kube-proxy and the CNI rules next to it use are known here.
 * docs/iptables-list.md lists them.
 */

/** What the translation of one rule's text gives: matches, target options, and what it could not read. */
export interface MatchTranslation {
  /** ` -m comment --comment "..." -m tcp --dport 80 ...`: the matches, each with a leading blank. */
  matches: string
  /** ` --to-destination 10.0.0.1:80`: the target's options, each with a leading blank. */
  targetOptions: string
  /** `-g` rather than `-j` (`[goto]`). */
  goto: boolean
  /** The words that could not be translated (empty: all were). */
  unknown: string
  /** A port word was a service name (`dpt:http`), not a number: printed without `-n`. */
  namedPort: boolean
}

/** The words of the text, split on blanks, and where each starts (reused between rules). */
const words: string[] = []
const starts: number[] = []

function splitWords(text: string, from: number, end: number): number {
  let n = 0
  let i = from
  while (i < end) {
    while (i < end && text.charCodeAt(i) === 32) i++
    if (i >= end) break
    const start = i
    while (i < end && text.charCodeAt(i) !== 32) i++
    starts[n] = start
    words[n++] = text.slice(start, i)
  }
  return n
}

/** `"..."` as iptables-save quotes a comment: backslash before `"` and `\`. */
export function quoteValue(value: string): string {
  if (!value.includes('"') && !value.includes('\\')) return `"${value}"`
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`
}

const isDigitsOrRange = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if ((c < 48 || c > 57) && c !== 58 /* : */ && c !== 44 /* , */ && c !== 45 /* - */) return false
  }
  return s.length > 0
}

/** `dpt:80`, `dpt:!80`, `dpts:80:90` -> the option and value; null for another word. */
function portWord(word: string): {option: string; value: string; negated: boolean} | null {
  const colon = word.indexOf(':')
  if (colon < 0) return null
  const key = word.slice(0, colon)
  const option =
    key === 'dpt' || key === 'dpts' ? '--dport' : key === 'spt' || key === 'spts' ? '--sport' : null
  if (option === null) return null
  let value = word.slice(colon + 1)
  const negated = value.startsWith('!')
  if (negated) value = value.slice(1)
  return {option, value, negated}
}

/** Masks of MARK's print (libxt_MARK.c mark_tg_print): `or X` is X/X, `xor X` is X/0, `set X` is X/all. */
function markOption(op: string, value: string): string | null {
  if (op === 'or') return ` --set-xmark ${value}/${value}`
  if (op === 'xor') return ` --set-xmark ${value}/0x0`
  if (op === 'set') return ` --set-xmark ${value}/0xffffffff`
  if (op === 'xset') return ` --set-xmark ${value}`
  if (op === 'and') return ` --and-mark ${value}`
  return null
}

const RECENT_COMMANDS: Readonly<Record<string, string>> = {
  CHECK: '--rcheck',
  SET: '--set',
  UPDATE: '--update',
  REMOVE: '--remove',
}

/** Translates `text` from `from` on (the part after the destination column) of a rule whose target is `target`. */
export function translateMatchText(
  text: string,
  from: number,
  end: number,
  target: string,
): MatchTranslation {
  let matches = ''
  let targetOptions = ''
  let unknown = ''
  let goto = false
  let namedPort = false
  const n = splitWords(text, from, end)
  const skip = (why: string) => (unknown += unknown === '' ? why : ` ${why}`)
  for (let k = 0; k < n; k++) {
    let word = words[k]!
    let bang = ''
    if (word === '!' && k + 1 < n) {
      bang = ' !'
      word = words[++k]!
    }
    if (word === '/*') {
      // A comment may hold blanks (and is not always first: `ctstate NEW /* ... */`).
      const close = text.indexOf(' */', starts[k]!)
      if (close < 0 || close + 3 > end) {
        skip(text.slice(starts[k]!, end))
        break
      }
      matches += ` -m comment --comment ${quoteValue(text.slice(starts[k]! + 3, close))}`
      while (k + 1 < n && starts[k + 1]! < close + 3) k++
    } else if (word === 'tcp' || word === 'udp' || word === 'sctp') {
      matches += ` -m ${word}`
      while (k + 1 < n) {
        const port = portWord(words[k + 1]!)
        if (port === null) break
        k++
        if (!isDigitsOrRange(port.value)) namedPort = true
        matches += `${port.negated ? ' !' : ''} ${port.option} ${port.value}`
      }
    } else if (word === 'multiport' && k + 2 < n) {
      const kind = words[k + 1]!
      let value = words[k + 2]!
      k += 2
      const negated = value.startsWith('!')
      if (negated) value = value.slice(1)
      if (!isDigitsOrRange(value)) namedPort = true
      matches += ` -m multiport${negated ? ' !' : ''} --${kind} ${value}`
    } else if (word === 'statistic' && words[k + 1] === 'mode' && k + 2 < n) {
      const mode = words[k + 2]!
      k += 2
      matches += ` -m statistic --mode ${mode}`
      if (mode === 'random' && words[k + 1] === 'probability' && k + 2 < n) {
        matches += ` --probability ${words[k + 2]}`
        k += 2
      } else if (mode === 'nth' && words[k + 1] === 'every' && k + 2 < n) {
        matches += ` --every ${words[k + 2]}`
        k += 2
        if (words[k + 1] === 'packet' && k + 2 < n) {
          matches += ` --packet ${words[k + 2]}`
          k += 2
        }
      }
    } else if (word === 'recent:' && k + 1 < n && RECENT_COMMANDS[words[k + 1]!]) {
      // recent_print (libxt_recent.c): the command, then `seconds:`, `reap`, `hit_count:`, `rttl`,
      // `name:`, `side:` and `mask:`, each of which iptables-save writes as an option.
      matches += ` -m recent${bang} ${RECENT_COMMANDS[words[++k]!]}`
      bang = ''
      while (k + 1 < n) {
        const key = words[k + 1]!
        if (key === 'reap' || key === 'rttl') {
          matches += ` --${key}`
          k++
        } else if (
          key === 'seconds:' ||
          key === 'hit_count:' ||
          key === 'name:' ||
          key === 'mask:'
        ) {
          if (k + 2 >= n) break
          const option = key === 'hit_count:' ? '--hitcount' : `--${key.slice(0, -1)}`
          matches += ` ${option} ${words[k + 2]}`
          k += 2
        } else if (key === 'side:') {
          if (k + 2 >= n) break
          matches += words[k + 2] === 'source' ? ' --rsource' : ' --rdest'
          k += 2
        } else break
      }
    } else if (word === 'ADDRTYPE' && words[k + 1] === 'match') {
      k++
      matches += ' -m addrtype'
      while (k + 1 < n) {
        const key = words[k + 1]!
        if ((key === 'src-type' || key === 'dst-type') && k + 2 < n) {
          let value = words[k + 2]!
          const negated = value.startsWith('!')
          if (negated) value = value.slice(1)
          matches += `${negated ? ' !' : ''} --${key} ${value}`
          k += 2
        } else if (key === 'limit-in' || key === 'limit-out') {
          matches += key === 'limit-in' ? ' --limit-iface-in' : ' --limit-iface-out'
          k++
        } else break
      }
    } else if (word === 'mark' && words[k + 1] === 'match' && k + 2 < n) {
      k += 2
      let negated = ''
      if (words[k] === '!' && k + 1 < n) {
        negated = ' !'
        k++
      }
      matches += ` -m mark${negated} --mark ${words[k]}`
    } else if ((word === 'ctstate' || word === 'state') && k + 1 < n) {
      const module = word === 'ctstate' ? 'conntrack' : 'state'
      matches += ` -m ${module}${bang} --${word} ${words[++k]}`
      bang = ''
    } else if (word === 'nfacct-name' && k + 1 < n) {
      matches += ` -m nfacct --nfacct-name ${words[++k]}`
    } else if (word === 'match-set' && k + 2 < n) {
      matches += ` -m set${bang} --match-set ${words[k + 1]} ${words[k + 2]}`
      bang = ''
      k += 2
    } else if (word === '[goto]') {
      goto = true
    } else if (
      word.startsWith('to:') &&
      (target === 'DNAT' || target === 'SNAT') &&
      word.length > 3
    ) {
      targetOptions += ` ${target === 'DNAT' ? '--to-destination' : '--to-source'} ${word.slice(3)}`
    } else if (
      (word === 'random' || word === 'random-fully' || word === 'persistent') &&
      (target === 'DNAT' || target === 'SNAT' || target === 'MASQUERADE')
    ) {
      targetOptions += ` --${word}`
    } else if (word === 'masq' && words[k + 1] === 'ports:' && k + 2 < n) {
      targetOptions += ` --to-ports ${words[k + 2]}`
      k += 2
    } else if (word === 'MARK' && target === 'MARK' && k + 2 < n) {
      const option = markOption(words[k + 1]!, words[k + 2]!)
      if (option === null) skip(`MARK ${words[k + 1]}`)
      else targetOptions += option
      k += 2
    } else if (word === 'reject-with' && target === 'REJECT' && k + 1 < n) {
      targetOptions += ` --reject-with ${words[++k]}`
    } else {
      skip(bang ? `!${word}` : word)
      bang = ''
      continue
    }
    if (bang) skip('!')
  }
  return {matches, targetOptions, goto, unknown, namedPort}
}
