/** Image dimensions read from a file's header, for the image preview's caption and scaling. Pure: no VS Code, no imports. */

/** Width and height from an image's header (PNG, GIF, BMP, JPEG, WebP), when it says them. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const has = (n: number) => bytes.length >= n;
	if (has(24) && bytes[0] === 0x89 && bytes[1] === 0x50) {
		return { width: view.getUint32(16), height: view.getUint32(20) };
	}
	if (has(10) && bytes[0] === 0x47 && bytes[1] === 0x49 && bytes[2] === 0x46) {
		return { width: view.getUint16(6, true), height: view.getUint16(8, true) };
	}
	if (has(26) && bytes[0] === 0x42 && bytes[1] === 0x4d) {
		return { width: Math.abs(view.getInt32(18, true)), height: Math.abs(view.getInt32(22, true)) };
	}
	if (has(30) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) {
		const chunk = String.fromCharCode(bytes[12]!, bytes[13]!, bytes[14]!, bytes[15]!);
		if (chunk === 'VP8X') {
			return {
				width: 1 + (bytes[24]! | (bytes[25]! << 8) | (bytes[26]! << 16)),
				height: 1 + (bytes[27]! | (bytes[28]! << 8) | (bytes[29]! << 16)),
			};
		}
		if (chunk === 'VP8 ') {
			return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff };
		}
		if (chunk === 'VP8L') {
			const b = view.getUint32(21, true);
			return { width: (b & 0x3fff) + 1, height: ((b >> 14) & 0x3fff) + 1 };
		}
		return undefined;
	}
	if (has(4) && bytes[0] === 0xff && bytes[1] === 0xd8) {
		// JPEG: walk the segments to a start of frame.
		let at = 2;
		while (at + 9 < bytes.length) {
			if (bytes[at] !== 0xff) {
				return undefined;
			}
			const marker = bytes[at + 1]!;
			if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
				return { width: view.getUint16(at + 7), height: view.getUint16(at + 5) };
			}
			at += 2 + view.getUint16(at + 2);
		}
	}
	return undefined;
}
