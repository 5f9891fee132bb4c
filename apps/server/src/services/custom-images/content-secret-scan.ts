import { CONTENT_SCAN_LIMITS, contentScanCandidates, looksBinary, type SecretWarning, scanTextForSecrets } from '@sandcast/core';
import type { FileChange, SandboxProvider } from '@sandcast/provider-sdk';

export interface ContentScanResult {
  warnings: SecretWarning[];
  filesScanned: number;
  bytesScanned: number;
  filesSkipped: number;
}

/**
 * Reads the small text files among a setup's changes from the provider and scans them for
 * credentials. Bounded: only files the listing says are small (CONTENT_SCAN_LIMITS.maxFileBytes),
 * at most maxFiles of them and maxTotalBytes by their listed sizes; a file that grew since the
 * listing is scanned up to the per-file limit only. A file that vanished or cannot be read is
 * skipped, not an error: the review must answer while the operator keeps working in the sandbox.
 */
export async function scanChangedContent(
  provider: Pick<SandboxProvider, 'readFile'>,
  leaseId: string,
  changes: readonly FileChange[],
): Promise<ContentScanResult> {
  const { files, dropped } = contentScanCandidates(changes);
  const result: ContentScanResult = { warnings: [], filesScanned: 0, bytesScanned: 0, filesSkipped: dropped };
  let budget = CONTENT_SCAN_LIMITS.maxTotalBytes;
  for (const change of files) {
    const listed = change.sizeBytes ?? 0;
    if (listed > budget) {
      result.filesSkipped++;
      continue;
    }
    budget -= listed;
    let bytes: Buffer;
    try {
      bytes = await provider.readFile(leaseId, change.path);
    } catch {
      result.filesSkipped++;
      continue;
    }
    const window = bytes.subarray(0, CONTENT_SCAN_LIMITS.maxFileBytes);
    result.filesScanned++;
    result.bytesScanned += window.length;
    if (looksBinary(window)) continue;
    result.warnings.push(...scanTextForSecrets(change.path, window.toString('utf8')));
  }
  return result;
}
