/**
 * What the three renderers share, one import for them: findings (./findings.ts), the node settings
 * (./node-settings.ts) and the per-service-port plan with its endpoints (./plan-types.ts, ./plan.ts).
 */
export {dedupeFindings, finding, jumpRulesFinding, type RenderTarget} from './findings.js'
export {
  badSetting,
  nodePortIPs,
  resolveNodeSettings,
  type FamilyDetector,
  type NodeSettings,
  type SettingSource,
} from './node-settings.js'
export type {PlannedEndpoint, PlannedFrontend, ServicePlan} from './plan-types.js'
export {familiesOf, planService} from './plan.js'
