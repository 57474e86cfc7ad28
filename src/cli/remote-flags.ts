/**
 * The flags that say how kp reaches a cluster's nodes through kubectl (README, "Reaching nodes
 * through kubectl"), shared by every command that reads `--node NAME` or `node/NAME`.
 */
import * as Flags from '@oclif/core/flags'
import type {RemoteOptions} from '../live/remote/index.js'

const helpGroup = 'CLUSTER'

export const remoteFlags = {
  kubeconfig: Flags.string({
    helpGroup,
    description:
      'With --node NAME or node/NAME: the kubeconfig kubectl uses (default: $KUBECONFIG, then ~/.kube/config).',
  }),
  context: Flags.string({
    helpGroup,
    description: 'With --node NAME or node/NAME: the kubeconfig context to use.',
  }),
  kubectl: Flags.string({
    helpGroup,
    description: 'The kubectl program to run (default: kubectl on PATH).',
  }),
  'kube-proxy-namespace': Flags.string({
    helpGroup,
    description:
      "The namespace of the kube-proxy pods (default: any; kube-system's are found first).",
  }),
  'kube-proxy-selector': Flags.string({
    helpGroup,
    description:
      'A label selector for the kube-proxy pods (default: any pod on the node with a container that runs kube-proxy).',
  }),
  'collector-pod': Flags.boolean({
    helpGroup,
    description:
      "Read the node through a short-lived pod kp creates there (hostNetwork, NET_ADMIN and NET_RAW only, the cluster's kube-proxy image), deleted when done: for k3s, static pods, or no exec rights. A change to the cluster, so only when asked.",
  }),
  'collector-image': Flags.string({
    helpGroup,
    description: "The collector pod's image (default: the image of the cluster's kube-proxy).",
  }),
}

/** The parsed remote flags (every one optional). */
export interface RemoteFlagValues {
  kubeconfig?: string
  context?: string
  kubectl?: string
  'kube-proxy-namespace'?: string
  'kube-proxy-selector'?: string
  'collector-pod'?: boolean
  'collector-image'?: string
  timeout?: number
}

export function remoteOptionsFrom(flags: RemoteFlagValues): RemoteOptions {
  return {
    kubectl: flags.kubectl,
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    kubeProxyNamespace: flags['kube-proxy-namespace'],
    kubeProxySelector: flags['kube-proxy-selector'],
    collectorPod: Boolean(flags['collector-pod']),
    collectorImage: flags['collector-image'],
    timeoutMs: flags.timeout === undefined ? undefined : flags.timeout * 1000,
  }
}
