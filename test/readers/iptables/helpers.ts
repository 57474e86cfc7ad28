/** Shared by the iptables reader tests: read text or a fixture through the real front door. */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {ProxyState, ServicePort} from '../../../src/model/types.js'
import {displayName} from '../../../src/core/state.js'
import {readState} from '../../../src/readers/read-state.js'
import {ROOT} from '../../helpers/run-cli.js'

export function readText(text: string, path = 'test.rules'): Promise<ProxyState> {
  return readState({sources: [{path, text}]})
}

export function readFixture(dir: string): Promise<ProxyState> {
  const path = join('fixtures/iptables', dir, 'input.rules')
  return readText(readFileSync(join(ROOT, path), 'utf8'), path)
}

export function service(state: ProxyState, name: string): ServicePort {
  const sp = state.services.find((s) => displayName(s) === name)
  if (!sp) throw new Error(`no service ${name}; have ${state.services.map(displayName).join(', ')}`)
  return sp
}

export function codes(state: ProxyState, severity?: 'error' | 'warning' | 'info'): string[] {
  return state.diagnostics
    .filter((d) => severity === undefined || d.severity === severity)
    .map((d) => d.code)
}

/** A service port without where it was seen, for whole-object comparisons. */
export function withoutRules(sp: ServicePort): Omit<ServicePort, 'rules'> {
  const {rules: _rules, ...rest} = sp
  return rest
}
