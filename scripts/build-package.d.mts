/** The repository root. */
export declare const REPOSITORY: string;
/** The file a successful build leaves in dist/; its modification time is when that build started. */
export declare const STAMP: string;
/** Builds the package in `packageFolder` with the workspace's TypeScript, then stamps its dist. */
export declare function buildPackage(packageFolder: string): Promise<void>;
