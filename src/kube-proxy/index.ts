/**
 * kube-proxy's own rules, once. What kube-proxy decides the same way in every mode (which
 * endpoints a service port uses, over which path a share is counted), and what it names (chains,
 * sets, maps and their hashes) or defaults (the masquerade mark, the affinity timeout), lives
 * here; the readers check rules against it, the renderers write rules from it, and the analyses
 * reason with it. Written twice, a rule drifts: a reader and a renderer that disagreed on one
 * made kp diff, explain and migrate disagree with each other.
 *
 * Modules: endpoints.ts (CategorizeEndpoints, serviceport.go), iptables-names.ts, ipvs-names.ts,
 * nftables-names.ts (names and hashes per mode), shares.ts (the probability cascade), settings.ts
 * (defaults), versions.ts (the releases whose layouts kp knows). Nothing here reads or writes a
 * format; it imports only the model.
 */
export * from './endpoints.js'
export * from './iptables-hooks.js'
export * from './iptables-names.js'
export * from './ipvs-names.js'
export * from './nftables-names.js'
export * from './nftables-verdicts.js'
export * from './settings.js'
export * from './shares.js'
export * from './versions.js'
export * from './releases.js'
