/** The label kp puts on the collector pods it creates, and `kp collect --cleanup` deletes by. */
export const COLLECTOR_LABEL = {key: 'app.kubernetes.io/managed-by', value: 'kp'} as const
