/**
 * The transaction form of nft text (`add|insert|delete|flush table|chain|set|map|rule|element`),
 * as kube-proxy feeds it to `nft -f`: each command applied to the objects it names.
 */
import {NFT_FAMILIES, getOrAddTable, unquote, type NftTable} from './ir.js'
import {NftObjectReader, SKIPPED_TABLE_OBJECTS} from './parse-objects.js'
import {
  blockStatements,
  lineAt,
  matchingBrace,
  splitElements,
  type WordLines,
} from './parse-words.js'

export abstract class NftCommandReader extends NftObjectReader {
  protected command(words: string[], lines: WordLines): void {
    const line = lineAt(lines, 0)
    const verb = words[0]!
    const object = words[1]
    if (object === 'ruleset') {
      if (verb === 'flush') this.doc.tables.clear()
      else this.notUnderstood(words, line, 'as a command')
      return
    }
    let i = 2
    let family = 'ip'
    if (
      words[i] !== undefined &&
      NFT_FAMILIES.has(words[i]!) &&
      words[i + 1] !== undefined &&
      words[i + 1] !== '{'
    ) {
      family = words[i]!
      i++
    }
    const tableName = words[i]
    if (tableName === undefined || tableName === '{') {
      this.report('warning', 'NFT_SYNTAX', `incomplete command: ${words.join(' ')}`, line)
      return
    }
    i++
    if (object === 'table') {
      if (verb === 'delete' || verb === 'destroy') {
        this.doc.tables.delete(`${family} ${tableName}`)
        return
      }
      const table = getOrAddTable(this.doc, family, tableName, line)
      if (verb === 'flush') {
        for (const c of table.chains.values()) c.clearRules()
        for (const s of table.sets.values()) s.elements = []
        return
      }
      for (const part of blockStatements(words, lines, i)) {
        if (part.words[0] === 'comment' && part.words.length === 2)
          table.comment = unquote(part.words[1]!)
        else if (part.words[0] !== 'flags')
          this.notUnderstood(part.words, lineAt(part.lines, 0), `in table ${family} ${tableName}`)
      }
      return
    }
    const objectName = words[i]
    if (objectName === undefined || objectName === '{') {
      this.report('warning', 'NFT_SYNTAX', `incomplete command: ${words.join(' ')}`, line)
      return
    }
    i++
    // `add counter ip kube-proxy NAME [{ packets N bytes M ; }]`; `ct` objects have a kind word
    // (`add ct helper ...`) and stay "not understood".
    if (object !== undefined && object !== 'ct' && SKIPPED_TABLE_OBJECTS.has(object)) {
      if (verb !== 'delete' && verb !== 'destroy')
        this.skippedObject([object, objectName], `${family} ${tableName}`, line)
      return
    }
    const existing = this.doc.tables.get(`${family} ${tableName}`)
    if ((verb === 'delete' || verb === 'destroy') && !existing) return
    const table = existing ?? getOrAddTable(this.doc, family, tableName, line)
    if (!existing)
      this.report(
        'info',
        'NFT_UNDECLARED',
        `table ${family} ${tableName} is used before it is added; taken as declared here`,
        line,
      )
    switch (object) {
      case 'chain':
        return this.chainCommand(verb, table, objectName, words, lines, i)
      case 'set':
      case 'map':
        return this.setCommand(verb, object, table, objectName, words, lines, i)
      case 'rule':
        return this.ruleCommand(verb, table, objectName, words, lines, i)
      case 'element':
        return this.elementCommand(verb, table, objectName, words, lines, i)
      case 'counter':
      case 'quota':
      case 'limit':
        // Named stateful objects: kube-proxy 1.37 counts rejected localhost NodePorts in
        // `localhost-nodeport-rejected-*` counters; nothing kp models depends on them.
        this.report(
          'info',
          'NFT_SKIPPED_OBJECT',
          `${object} ${objectName} in table ${family} ${tableName} is not used by kp and was skipped`,
          line,
        )
        return
      default:
        this.notUnderstood(words, line, 'as a command')
    }
  }

  protected chainCommand(
    verb: string,
    table: NftTable,
    name: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    if (verb === 'delete' || verb === 'destroy') {
      table.chains.delete(name)
      return
    }
    const chain = this.chainOf(table, name, lineAt(lines, 0))
    if (verb === 'flush') {
      chain.clearRules()
      return
    }
    for (const part of blockStatements(words, lines, i)) {
      if (!this.chainProperty(chain, part.words, lineAt(part.lines, 0)))
        this.notUnderstood(part.words, lineAt(part.lines, 0), `in chain ${name}`)
    }
  }

  protected setCommand(
    verb: string,
    kind: 'set' | 'map',
    table: NftTable,
    name: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    if (verb === 'delete' || verb === 'destroy') {
      table.sets.delete(name)
      return
    }
    const set = this.setOf(table, kind, name, lineAt(lines, 0))
    if (verb === 'flush') {
      set.elements = []
      return
    }
    for (const part of blockStatements(words, lines, i)) {
      if (!this.setProperty(set, part.words, part.lines))
        this.notUnderstood(part.words, lineAt(part.lines, 0), `in ${kind} ${name}`)
    }
  }

  protected ruleCommand(
    verb: string,
    table: NftTable,
    chainName: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    const line = lineAt(lines, 0)
    if (verb === 'delete' || verb === 'destroy' || verb === 'replace') {
      // Rules are addressed by kernel handle here, which a saved transaction cannot resolve.
      this.report(
        'warning',
        'NFT_UNSUPPORTED',
        `\`${verb} rule\` addresses a rule by its handle, which kp cannot resolve from text; ignored`,
        line,
      )
      return
    }
    let chain = table.chains.get(chainName)
    if (!chain) {
      this.report(
        'info',
        'NFT_UNDECLARED',
        `chain ${chainName} gets a rule before it is added; taken as declared here`,
        line,
      )
      chain = this.chainOf(table, chainName, line)
    }
    const atStart = verb === 'insert'
    const position = words[i]
    if (
      (position === 'position' || position === 'handle' || position === 'index') &&
      words[i + 1] !== undefined
    ) {
      this.report(
        'info',
        'NFT_UNSUPPORTED',
        `\`${verb} rule ... ${position} ${words[i + 1]}\`: the position cannot be resolved from text; the rule is ${atStart ? 'put first' : 'appended'}`,
        line,
      )
      i += 2
    }
    if (i >= words.length) {
      this.report('warning', 'NFT_SYNTAX', `empty rule for chain ${chainName}`, line)
      return
    }
    this.addRule(chain, words.slice(i), lineAt(lines, i), atStart)
  }

  protected elementCommand(
    verb: string,
    table: NftTable,
    setName: string,
    words: string[],
    lines: WordLines,
    i: number,
  ): void {
    const line = lineAt(lines, 0)
    if (words[i] !== '{') {
      this.report(
        'warning',
        'NFT_SYNTAX',
        `element command without { ... }: ${words.join(' ')}`,
        line,
      )
      return
    }
    let set = table.sets.get(setName)
    if (verb === 'delete' || verb === 'destroy') {
      if (!set) return
      const close = matchingBrace(words, i)
      const gone = new Set(
        splitElements(words, lines, i + 1, close < 0 ? words.length : close, false).map((e) =>
          e.key.join(' . '),
        ),
      )
      set.elements = set.elements.filter((e) => !gone.has(e.key.join(' . ')))
      return
    }
    if (!set) {
      this.report(
        'info',
        'NFT_UNDECLARED',
        `set ${setName} gets elements before it is added; taken as declared here`,
        line,
      )
      set = this.setOf(table, 'set', setName, line)
    }
    const close = matchingBrace(words, i)
    const elements = splitElements(words, lines, i + 1, close < 0 ? words.length : close, true)
    // A set first seen through its elements: mapped values make it a map.
    if (set.type === '' && elements.some((e) => e.value !== null)) set.kind = 'map'
    for (const el of elements) set.elements.push(el)
  }
}
