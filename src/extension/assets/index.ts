import { AssetRecords } from '../../core/state';
import { Commands } from '../platform/constants';
import { Disposable } from '../platform/disposable';
import { once, registerLazyCommands } from '../platform/lazy';
import type { Services } from '../platform/services';
import { AssetCommands } from './assetCommands';
import { AssetsView } from './assetsView';

export type { AssetsView, AssetsTreeProvider, AssetsNode } from './assetsView';
export { requireAssets } from './assetClient';

/** The commands of AssetCommands (built at the first of them). */
const ASSET_COMMANDS = [
  Commands.uploadAsset,
  Commands.refreshAssets,
  Commands.downloadAsset,
  Commands.copyAssetReference,
  Commands.copyAssetId,
  Commands.deleteAsset,
];

/** The assets feature: the Assets view (uploads and outputs this machine knows of) and its commands. */
export class AssetsFeature extends Disposable {
  /** The Assets view (`comfyCloud.assets`). */
  readonly view: AssetsView;

  constructor(services: Services) {
    super();
    const { jobs, config, display, log } = services;
    // Asset records live beside the job records: an upload from the CLI shows in the Assets view too.
    this.view = this.register(new AssetsView(jobs, new AssetRecords(services.store.dir), config, display, log));
    const commands = once(() => this.register(new AssetCommands(jobs, this.view, display, log)));
    this.register(registerLazyCommands(ASSET_COMMANDS, () => commands().commands()));
  }
}

/** Registers the assets feature: the Assets view and its commands. */
export function register(services: Services): AssetsFeature {
  return new AssetsFeature(services);
}
