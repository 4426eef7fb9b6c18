/**
 * fnbox's sync report, rebuilt from per-change details: what `src/core/sync_report.c` renders, for the
 * report of a batch sync this package ran itself (a `beforeSync` handler answered for each change, then
 * `fnbox sync` wrote the accepted ones). Same fields, same order, same one-sentence `message`.
 */
import type { SyncDetail, SyncErrorBehavior, SyncReport } from '../types.js';

export function renderReport(details: SyncDetail[], onError: SyncErrorBehavior, rolledBack: boolean, rollbackFailed: boolean): SyncReport {
  const synced: string[] = [];
  const failed: Array<{ path: string; error: string }> = [];
  const skipped: Array<{ path: string; reason?: string; rule?: string; operation?: string }> = [];
  const notAttempted: string[] = [];
  const undone: string[] = [];
  let denied = 0;
  for (const d of details) {
    switch (d.status) {
      case 'synced':
        synced.push(d.path);
        break;
      case 'rolledBack':
        undone.push(d.path);
        break;
      case 'notAttempted':
        notAttempted.push(d.path);
        break;
      case 'failed':
        failed.push({ path: d.path, error: d.error ?? '' });
        break;
      case 'skipped': {
        const s: { path: string; reason?: string; rule?: string; operation?: string } = { path: d.path, reason: d.reason ?? '' };
        if (d.rule) {
          s.rule = d.rule;
          if (d.operation) s.operation = d.operation;
          denied++;
        }
        skipped.push(s);
        break;
      }
    }
  }
  const n = details.length;
  const kept = synced.length;
  let message: string;
  if (n === 0) message = 'nothing to sync: there were no changes';
  else if (rolledBack) message = 'nothing was kept: a change failed and the sync was rolled back (see failed)';
  else if (kept === 0 && denied === n)
    message = `nothing was written: the mount's permissions refused all ${n} change${n === 1 ? '' : 's'} (each is in skipped with the rule that decided)`;
  else if (kept === 0 && denied > 0)
    message = `nothing was written: the mount's permissions refused ${denied} of ${n} changes (see skipped), ${failed.length} failed, ${skipped.length - denied} skipped for other reasons`;
  else
    message = `${kept} of ${n} change${n === 1 ? '' : 's'} written to the host${kept === n ? '' : ' (the others are in skipped, failed or notAttempted, each with why)'}`;
  return {
    success: failed.length === 0 && !rollbackFailed,
    synced,
    failed,
    skipped,
    notAttempted,
    rolledBack,
    undone,
    onError,
    details,
    deniedByPermissions: denied,
    message,
  };
}
