import type { BatchProgress } from '../domain/batch-model';

/** Items a batch is done with: succeeded, failed or in review. */
export function itemsDone(batch: BatchProgress): number {
  return batch.items.succeeded.count + batch.items.failed.count + batch.items.needs_review.count;
}

/** One line of a progress bar: `[#####.....] 512/1000  51%  12.3/s  ~40s left  (7 in review)`. */
export function progressLine(batch: BatchProgress, rate: number, width = 30): string {
  const total = batch.total.count;
  const done = itemsDone(batch);
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
  const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
  const left = rate > 0 ? `~${formatSeconds((total - done) / rate)} left` : 'estimating…';
  const review = batch.items.needs_review.count > 0 ? `  (${batch.items.needs_review.count} in review)` : '';
  return `${bar} ${done}/${total}  ${percent}%  ${rate.toFixed(1)}/s  ${left}  ${batch.status}${review}`;
}

function formatSeconds(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
