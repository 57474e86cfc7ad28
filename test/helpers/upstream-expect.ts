/**
 * One entry of a corpus `*.expect.json`: the hand-derived expectation of a kube-proxy unit-test
 * scenario (field conventions in fixtures/render/upstream/PROVENANCE.md and fixtures/PROVENANCE.md).
 */
export interface UpstreamExpectEntry {
  namespace: string
  name: string
  port_name: string
  protocol: 'TCP' | 'UDP' | 'SCTP'
  cluster_ip: string
  port: number
  node_port: number | null
  external_ips: string[]
  load_balancer_ips: string[]
  session_affinity_seconds: number | null
  external_traffic_policy: 'Cluster' | 'Local'
  internal_traffic_policy: 'Cluster' | 'Local'
  endpoints: {ip: string; port: number; local: boolean | null}[]
}
