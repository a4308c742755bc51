/** The repository root. */
export declare const REPOSITORY: string;
/** The workspaces the youyou binary imports, in build order. */
export declare const CLI_PACKAGES: readonly string[];
/** Builds the stale packages (names under packages/, in build order); resolves with those it built. */
export declare function buildStale(options?: {
  packages?: readonly string[];
  log?: (line: string) => void;
}): Promise<string[]>;
