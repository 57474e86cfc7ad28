/**
 * The rules as each reader read them, kept while the state is read: kp trace walks these, not the
 * model's summary, so that it is an independent second reading of the input.
 */
import type {IpsetDump} from '../../readers/ipset/parse.js'
import type {IptablesRuleset} from '../../readers/iptables/ruleset.js'
import type {IpvsadmListing} from '../../readers/ipvsadm/parse.js'
import type {NftDocument} from '../../readers/nft/ir.js'
import type {ParsedSource} from '../../readers/types.js'

export interface TraceSources {
  rulesets: Array<{path: string; ruleset: IptablesRuleset}>
  nftDocuments: Array<{path: string; doc: NftDocument}>
  ipvsListings: Array<{path: string; listing: IpvsadmListing}>
  ipsets: Array<{path: string; dump: IpsetDump}>
}

/** Empty sources, and the `onParsed` hook of a read that fills them. */
export function collectTraceSources(): {
  sources: TraceSources
  onParsed: (p: ParsedSource) => void
} {
  const sources: TraceSources = {rulesets: [], nftDocuments: [], ipvsListings: [], ipsets: []}
  const onParsed = (p: ParsedSource) => {
    if (!p.data) return
    const path = p.source.path
    if (p.format === 'iptables-save')
      sources.rulesets.push({path, ruleset: p.data as IptablesRuleset})
    else if (p.format === 'nft' || p.format === 'nft-json')
      sources.nftDocuments.push({path, doc: p.data as NftDocument})
    else if (p.format === 'ipvsadm')
      sources.ipvsListings.push({path, listing: p.data as IpvsadmListing})
    else if (p.format === 'ipset') sources.ipsets.push({path, dump: p.data as IpsetDump})
  }
  return {sources, onParsed}
}
