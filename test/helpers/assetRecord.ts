import { blankAsset } from '../../server/src/assets/adoption';
import type { AssetRecord } from '../../server/src/assets/types';

/** An asset record for tests of code that reads records: the desk's blank one at version 1, with `fields`. */
export function testAsset(id: string, name: string, fields: Partial<AssetRecord> = {}): AssetRecord {
	return { ...blankAsset(id, name, '', 'test'), picked_version: 1, ...fields };
}
