/** The model router on the emulator (Model router API): see service.ts. */
export {
  createModelRouter,
  ROUTER_PREFIX,
  TEST_ROUTER_KEY,
  type ModelRouter,
  type ModelRouterOptions,
} from './service';
export { BUCKETS, BUCKET_STATUS, ERROR_TYPE_HEADER, SPEND_HEADERS, type Bucket, type FieldError } from './buckets';
export { DEFAULT_LIMIT, EMPTY_PAGE_INDEX, MAX_LIMIT, SHORT_PAGE_INDEX, type CatalogEntry } from './catalog';
