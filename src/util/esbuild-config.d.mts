import type { BuildOptions } from 'esbuild';
export declare const BUNDLE_OPTIONS: BuildOptions;
export declare function pruneStaleBundles(cacheDir: string, prefix: string, keep: string): void;
