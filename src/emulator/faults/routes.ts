/**
 * The requests a fault rule can target: route kinds (one per operation of each surface, and `any`, `router:any`,
 * `v1:any` for a whole surface), the route kind of each route name, and which kinds a rule's `on` covers.
 */
/** Which requests a rule targets: an operation, or `any`. `content` covers the content endpoint and the signed origin. */
export const ROUTE_KINDS = [
  'submit',
  'list',
  'get',
  'cancel',
  'events',
  'workflow',
  'upload',
  'fromHash',
  'byHash',
  'getAsset',
  'deleteAsset',
  'content',
  'health',
  'any',
  // The model router (modelRouter/): its own operations; `any` above is every job and asset route, `router:any`
  // every router route.
  'router:list',
  'router:get',
  'router:schema',
  'router:invoke',
  'router:any',
  // The deprecated v1 surface (v1/, Cloud API v1 (deprecated)): its own operations; `v1:ws` is the WebSocket upgrade
  // and its connection, `v1:any` every v1 route (`any` above stays the v2 job and asset routes).
  'v1:objectInfo',
  'v1:upload',
  'v1:prompt',
  'v1:status',
  'v1:jobs',
  'v1:history',
  'v1:view',
  'v1:cancel',
  'v1:ws',
  'v1:any',
] as const;

/** One of {@link ROUTE_KINDS}. */
export type RouteKind = (typeof ROUTE_KINDS)[number];

/** The route name of POST /api/v2/jobs: the one route whose faults claim an Idempotency-Key. */
export const SUBMIT_ROUTE = 'submitJob';

/** The route kind of each route name (router.ts names). */
export const KIND_OF_ROUTE: Readonly<Record<string, RouteKind>> = {
  submitJob: 'submit',
  listJobs: 'list',
  getJob: 'get',
  cancelJob: 'cancel',
  jobEvents: 'events',
  jobWorkflow: 'workflow',
  uploadAsset: 'upload',
  assetFromHash: 'fromHash',
  assetByHash: 'byHash',
  getAsset: 'getAsset',
  deleteAsset: 'deleteAsset',
  assetContent: 'content',
  signedContent: 'content',
  health: 'health',
  routerListModels: 'router:list',
  routerGetModel: 'router:get',
  routerGetSchema: 'router:schema',
  routerInvoke: 'router:invoke',
  v1ObjectInfo: 'v1:objectInfo',
  v1ObjectInfoClass: 'v1:objectInfo',
  v1UploadImage: 'v1:upload',
  v1UploadMask: 'v1:upload',
  v1Prompt: 'v1:prompt',
  v1JobStatus: 'v1:status',
  v1Job: 'v1:jobs',
  v1History: 'v1:history',
  v1View: 'v1:view',
  v1Interrupt: 'v1:cancel',
  v1Queue: 'v1:cancel',
  v1Socket: 'v1:ws',
};

/**
 * Whether a rule `on` a route kind targets a request of route kind `kind`: `any` is every v2 job and asset route,
 * `router:any` every router route, `v1:any` every v1 route (the WebSocket included).
 */
export function targets(on: RouteKind, kind: RouteKind | undefined): boolean {
  if (kind === undefined) return on === 'any';
  if (on === kind) return true;
  const family = kind.startsWith('router:') ? 'router' : kind.startsWith('v1:') ? 'v1' : 'v2';
  if (on === 'any') return family === 'v2';
  return (on === 'router:any' && family === 'router') || (on === 'v1:any' && family === 'v1');
}
