// Types for the benchmark's dump generator (a plain .mjs script the tests import).
export function chainHash(input: string): string
export function kernelProbability(k: number): string
export function ipv4(n: number): string
export const CLUSTER_IP_BASE: number
export const POD_IP_BASE: number
export const POD_CIDR: string
export function serviceName(i: number): string
export function generateIptablesSave(
  path: string,
  opts: {
    services: number
    endpointsPerService: number
    comments?: 'auto' | 'always'
    date?: string
  },
): Promise<{lines: number; bytes: number; largeCluster: boolean}>
