/**
 * The BLAKE3-256 engines the hash worker (hashWorker.ts) computes with; loaded only there, never on the calling thread.
 * - `native`: the BLAKE3 reference implementation (Rust, with its SIMD code for the CPU at hand) as a Node-API add-on,
 *   `@napi-rs/blake-hash`, prebuilt for each platform (no compiler at install time). Node-API is ABI-stable, so the
 *   same binary loads in Node 20 and in VS Code's Electron. About 2–3 GiB/s on one core here, against about 0.3 for
 *   hash-wasm (bench/README.md, figures of 2026-11-28).
 * - `wasm`: hash-wasm's WebAssembly build (portable, no SIMD): where no native binary loads (a platform the .vsix
 *   carries none for, a libc it was not built for).
 * The build copies the add-on's binaries for the platform it runs on to `dist/native/` (esbuild.mjs), since a .vsix
 * has no node_modules.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { createBLAKE3 } from 'hash-wasm';

/** Which implementation computes the digests. */
export type Blake3Engine = 'native' | 'wasm';

/** An incremental BLAKE3-256: `update` any number of times, then `hex`; `reset` starts a new input. */
export interface Blake3 {
  readonly engine: Blake3Engine;
  update(bytes: Uint8Array): void;
  /** The 256-bit digest of everything fed since the start (or the last `reset`), as 64 lowercase hex digits. */
  hex(): string;
  reset(): void;
}

/** The part of `@napi-rs/blake-hash` used here. */
interface NativeModule {
  Blake3Hasher: new () => { update(input: Uint8Array): unknown; digest(format: 'hex'): string; reset(): void };
}

/** undefined: not tried yet; null: no binary loads here. */
let native: NativeModule | null | undefined;

/**
 * The add-on, or null when none loads. Tried in order: a binary the build put beside this script's bundle
 * (`native/blake.<platform>-<arch>[-<abi>].node`; the first that loads, so a glibc build that fails on musl falls to the
 * next), then the package itself (running from tsc's output, where node_modules is at hand; a .vsix has none).
 */
function loadNative(): NativeModule | null {
  if (native !== undefined) return native;
  // createRequire: a require the bundler leaves alone (these are files found at run time, not modules to bundle).
  const load = createRequire(__filename);
  const dir = path.join(__dirname, 'native');
  const prefix = `blake.${process.platform}-${process.arch}`;
  let files: string[] = [];
  try {
    files = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(prefix) && f.endsWith('.node'))
      .map((f) => path.join(dir, f));
  } catch {
    // No native/ folder: running from tsc's output, or a build without the add-on.
  }
  for (const candidate of [...files, '@napi-rs/blake-hash']) {
    try {
      const loaded = load(candidate) as Partial<NativeModule>;
      if (typeof loaded.Blake3Hasher === 'function') return (native = loaded as NativeModule);
    } catch {
      // Absent, or built for another platform or libc: try the next, then fall back to WebAssembly.
    }
  }
  return (native = null);
}

/**
 * A new BLAKE3-256 hasher: the native add-on when it loads, else hash-wasm. `engine` forces one (tests check both
 * against the published test vectors). @throws Error when `native` is forced and no binary loads here.
 */
export async function createBlake3(engine?: Blake3Engine): Promise<Blake3> {
  const addOn = engine === 'wasm' ? null : loadNative();
  if (addOn) {
    const hasher = new addOn.Blake3Hasher();
    return {
      engine: 'native',
      update: (bytes) => void hasher.update(bytes),
      hex: () => hasher.digest('hex'),
      reset: () => hasher.reset(),
    };
  }
  if (engine === 'native') throw new Error(`no native BLAKE3 add-on loads on ${process.platform}-${process.arch}`);
  const hasher = await createBLAKE3(256);
  hasher.init();
  return {
    engine: 'wasm',
    update: (bytes) => void hasher.update(bytes),
    hex: () => hasher.digest('hex'),
    reset: () => void hasher.init(),
  };
}
