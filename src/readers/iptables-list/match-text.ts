/**
 * The match and target text of one `iptables -L` rule (what follows the destination column: the
 * comment between its slash-star marks, `tcp dpt:80`, `statistic mode random probability 0.5`,
 * `tcp to:10.244.1.5:8080`, `MARK or 0x4000`, ...) written back as the options iptables-save
 * writes for it. Each extension's print function (iptables' extensions/libxt_*.c) decides the
 * words; only those of kube-proxy's rules and the CNI rules next to them are known here.
 * docs/iptables-list.md lists them. Words are compared and copied as bytes (./out-bytes.ts).
 */
import {isNumericPorts, LineWords, OutBytes} from './out-bytes.js'

/** What one rule's text gave besides the options written. */
export interface MatchTranslation {
  /** `-g` rather than `-j` (`[goto]`). */
  goto: boolean
  /** The words that could not be translated (empty: all were). */
  unknown: string
  /** A port was a service name (`dpt:http`), not a number: listed without -n. */
  namedPort: boolean
}

const RECENT_COMMANDS: Readonly<Record<string, string>> = {
  CHECK: ' --rcheck',
  SET: ' --set',
  UPDATE: ' --update',
  REMOVE: ' --remove',
}

/** Options of the recent match that take a value, by the word recent_print writes before it. */
const RECENT_VALUES: Readonly<Record<string, string>> = {
  'seconds:': ' --seconds ',
  'hit_count:': ' --hitcount ',
  'name:': ' --name ',
  'mask:': ' --mask ',
}

/** The first bytes of the words translated below: any other word is not looked at further. */
const HANDLED_FIRST_BYTES: boolean[] = []
for (const word of [
  '/*',
  'tcp',
  'udp',
  'sctp',
  'multiport',
  'statistic',
  'recent:',
  'ADDRTYPE',
  'mark',
  'ctstate',
  'state',
  'nfacct-name',
  'match-set',
  '[goto]',
  'to:',
  'random',
  'persistent',
  'masq',
  'MARK',
  'reject-with',
])
  HANDLED_FIRST_BYTES[word.charCodeAt(0)] = true

/** Words of one rule's text, and the target options kept until the matches are written. */
const w = new LineWords()
const targetOut = new OutBytes(256)

/**
 * Writes the matches of src[from, to) to `out`, then ` -j TARGET` (or `-g`) and the target's
 * options. `target` is the target column (src[targetFrom, targetTo)), empty for none.
 */
export function translateMatchText(
  src: Buffer,
  from: number,
  to: number,
  target: string,
  targetFrom: number,
  targetTo: number,
  out: OutBytes,
): MatchTranslation {
  let unknown = ''
  let goto = false
  let namedPort = false
  targetOut.at = 0
  const t = targetOut
  const skip = (text: string) => (unknown += unknown === '' ? text : ` ${text}`)
  w.split(src, from, to)
  const n = w.count
  for (let k = 0; k < n; k++) {
    let bang = false
    if (w.is(k, '!') && k + 1 < n) {
      bang = true
      k++
    }
    const c0 = w.byteAt(k, 0)
    if (!HANDLED_FIRST_BYTES[c0]) {
      skip(bang ? `!${w.text(k)}` : w.text(k))
      continue
    }
    if (c0 === 47 /* / */ && w.is(k, '/*')) {
      // A comment may hold blanks, and is not always first (`ctstate NEW /* ... */`).
      const open = w.start[k]!
      const close = src.indexOf(' */', open)
      if (close < 0 || close + 3 > to) {
        skip(src.toString('utf8', open, to))
        break
      }
      out.ascii(' -m comment --comment ')
      out.quoted(src, open + 3, close)
      while (k + 1 < n && w.start[k + 1]! < close + 3) k++
    } else if (w.is(k, 'tcp') || w.is(k, 'udp') || w.is(k, 'sctp')) {
      out.ascii(' -m ')
      out.copy(src, w.start[k]!, w.end[k]!)
      // `dpt:80`, `dpt:!80`, `dpts:80:90`, `spt:...`
      while (k + 1 < n) {
        const p = k + 1
        const dst = w.startsWith(p, 'dpt')
        if (!dst && !w.startsWith(p, 'spt')) break
        const colon = w.byteAt(p, 3) === 58 ? 3 : w.byteAt(p, 4) === 58 ? 4 : -1
        if (colon < 0) break
        k++
        let valueFrom = w.start[p]! + colon + 1
        if (src[valueFrom] === 33 /* ! */) {
          out.ascii(' !')
          valueFrom++
        }
        if (!isNumericPorts(src, valueFrom, w.end[p]!)) namedPort = true
        out.ascii(dst ? ' --dport ' : ' --sport ')
        out.copy(src, valueFrom, w.end[p]!)
      }
    } else if (w.is(k, 'multiport') && k + 2 < n) {
      // `multiport dports 80,443` (`sports`, `ports`; `dports  !80` negated).
      out.ascii(' -m multiport')
      let valueFrom = w.start[k + 2]!
      if (src[valueFrom] === 33 /* ! */) {
        out.ascii(' !')
        valueFrom++
      }
      if (!isNumericPorts(src, valueFrom, w.end[k + 2]!)) namedPort = true
      out.ascii(' --')
      out.copy(src, w.start[k + 1]!, w.end[k + 1]!)
      out.byte(32)
      out.copy(src, valueFrom, w.end[k + 2]!)
      k += 2
    } else if (w.is(k, 'statistic') && w.is(k + 1, 'mode') && k + 2 < n) {
      out.ascii(' -m statistic --mode ')
      out.copy(src, w.start[k + 2]!, w.end[k + 2]!)
      const random = w.is(k + 2, 'random')
      k += 2
      if (random && w.is(k + 1, 'probability') && k + 2 < n) {
        out.ascii(' --probability ')
        out.copy(src, w.start[k + 2]!, w.end[k + 2]!)
        k += 2
      } else if (w.is(k + 1, 'every') && k + 2 < n) {
        out.ascii(' --every ')
        out.copy(src, w.start[k + 2]!, w.end[k + 2]!)
        k += 2
        if (w.is(k + 1, 'packet') && k + 2 < n) {
          out.ascii(' --packet ')
          out.copy(src, w.start[k + 2]!, w.end[k + 2]!)
          k += 2
        }
      }
    } else if (w.is(k, 'recent:') && k + 1 < n && RECENT_COMMANDS[w.text(k + 1)]) {
      // recent_print (libxt_recent.c): the command, then `seconds:`, `reap`, `hit_count:`,
      // `rttl`, `name:`, `side:` and `mask:`, each an option of iptables-save's.
      out.ascii(bang ? ' -m recent !' : ' -m recent')
      bang = false
      out.ascii(RECENT_COMMANDS[w.text(++k)]!)
      // iptables-save writes the side last, after the mask the listing prints after it.
      let side = ''
      while (k + 1 < n) {
        if (w.is(k + 1, 'reap') || w.is(k + 1, 'rttl')) {
          out.ascii(' --')
          out.copy(src, w.start[k + 1]!, w.end[k + 1]!)
          k++
          continue
        }
        if (k + 2 >= n) break
        if (w.is(k + 1, 'side:')) {
          side = w.is(k + 2, 'source') ? ' --rsource' : ' --rdest'
          k += 2
          continue
        }
        const option =
          w.byteAt(k + 1, w.length(k + 1) - 1) === 58 ? RECENT_VALUES[w.text(k + 1)] : undefined
        if (option === undefined) break
        out.ascii(option)
        out.copy(src, w.start[k + 2]!, w.end[k + 2]!)
        k += 2
      }
      out.ascii(side)
    } else if (w.is(k, 'ADDRTYPE') && w.is(k + 1, 'match')) {
      k++
      out.ascii(' -m addrtype')
      while (k + 1 < n) {
        const src_ = w.is(k + 1, 'src-type')
        if ((src_ || w.is(k + 1, 'dst-type')) && k + 2 < n) {
          let valueFrom = w.start[k + 2]!
          if (src[valueFrom] === 33) {
            out.ascii(' !')
            valueFrom++
          }
          out.ascii(src_ ? ' --src-type ' : ' --dst-type ')
          out.copy(src, valueFrom, w.end[k + 2]!)
          k += 2
        } else if (w.is(k + 1, 'limit-in') || w.is(k + 1, 'limit-out')) {
          out.ascii(w.is(k + 1, 'limit-in') ? ' --limit-iface-in' : ' --limit-iface-out')
          k++
        } else break
      }
    } else if (w.is(k, 'mark') && w.is(k + 1, 'match') && k + 2 < n) {
      k += 2
      out.ascii(' -m mark')
      if (w.is(k, '!') && k + 1 < n) {
        out.ascii(' !')
        k++
      }
      out.ascii(' --mark ')
      out.copy(src, w.start[k]!, w.end[k]!)
    } else if ((w.is(k, 'ctstate') || w.is(k, 'state')) && k + 1 < n) {
      out.ascii(w.is(k, 'ctstate') ? ' -m conntrack' : ' -m state')
      out.ascii(bang ? ' ! --' : ' --')
      bang = false
      out.copy(src, w.start[k]!, w.end[k]!)
      out.byte(32)
      k++
      out.copy(src, w.start[k]!, w.end[k]!)
    } else if (w.is(k, 'nfacct-name') && k + 1 < n) {
      out.ascii(' -m nfacct --nfacct-name ')
      k++
      out.copy(src, w.start[k]!, w.end[k]!)
    } else if (w.is(k, 'match-set') && k + 2 < n) {
      out.ascii(bang ? ' -m set ! --match-set ' : ' -m set --match-set ')
      bang = false
      out.copy(src, w.start[k + 1]!, w.end[k + 1]!)
      out.byte(32)
      out.copy(src, w.start[k + 2]!, w.end[k + 2]!)
      k += 2
    } else if (w.is(k, '[goto]')) {
      goto = true
    } else if (
      w.startsWith(k, 'to:') &&
      w.length(k) > 3 &&
      (target === 'DNAT' || target === 'SNAT')
    ) {
      t.ascii(target === 'DNAT' ? ' --to-destination ' : ' --to-source ')
      t.copy(src, w.start[k]! + 3, w.end[k]!)
    } else if (
      (w.is(k, 'random') || w.is(k, 'random-fully') || w.is(k, 'persistent')) &&
      (target === 'DNAT' || target === 'SNAT' || target === 'MASQUERADE')
    ) {
      t.ascii(' --')
      t.copy(src, w.start[k]!, w.end[k]!)
    } else if (w.is(k, 'masq') && w.is(k + 1, 'ports:') && k + 2 < n) {
      t.ascii(' --to-ports ')
      t.copy(src, w.start[k + 2]!, w.end[k + 2]!)
      k += 2
    } else if (w.is(k, 'MARK') && target === 'MARK' && k + 2 < n) {
      // mark_tg_print (libxt_MARK.c): `or X` is X/X, `xor X` is X/0, `set X` is X/all ones.
      const value = w.text(k + 2)
      if (w.is(k + 1, 'or')) t.ascii(` --set-xmark ${value}/${value}`)
      else if (w.is(k + 1, 'xor')) t.ascii(` --set-xmark ${value}/0x0`)
      else if (w.is(k + 1, 'set')) t.ascii(` --set-xmark ${value}/0xffffffff`)
      else if (w.is(k + 1, 'xset')) t.ascii(` --set-xmark ${value}`)
      else if (w.is(k + 1, 'and')) t.ascii(` --and-mark ${value}`)
      else skip(`MARK ${w.text(k + 1)} ${value}`)
      k += 2
    } else if (w.is(k, 'reject-with') && target === 'REJECT' && k + 1 < n) {
      t.ascii(' --reject-with ')
      k++
      t.copy(src, w.start[k]!, w.end[k]!)
    } else {
      skip(bang ? `!${w.text(k)}` : w.text(k))
      continue
    }
    if (bang) skip('!')
  }
  if (targetTo > targetFrom) {
    out.ascii(goto ? ' -g ' : ' -j ')
    out.copy(src, targetFrom, targetTo)
    out.copy(t.buf, 0, t.at)
  }
  return {goto, unknown, namedPort}
}
