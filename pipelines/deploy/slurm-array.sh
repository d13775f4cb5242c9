#!/usr/bin/env bash
# One campaign as 8 shards: a Slurm job array (docs/shards.md). Submit with `sbatch slurm-array.sh`.
# Slurm sets SLURM_ARRAY_TASK_ID (0…7); `--shard-count 8` reads it. The audience and results live
# on a shared file system; `pushline merge-results` combines the summaries when all tasks are done
# (the last line shows how to chain it).
#SBATCH --job-name=winback-nightly
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=1G
#SBATCH --time=04:00:00
#SBATCH --signal=TERM@60
# A job requeued after a node failure runs the same command: --auto-resume continues it.
#SBATCH --requeue
#SBATCH --output=/shared/campaigns/results/winback/slurm-%A_%a.log
set -euo pipefail
shards=8
results=/shared/campaigns/results/winback
export APNS_KEY_FILE=/shared/secrets/AuthKey.p8
export FCM_SERVICE_ACCOUNT=/shared/secrets/fcm-service-account.json
# exec: Slurm's SIGTERM (sent 60 s before the time limit, --signal above) reaches pushline, which
# drains in-flight requests and writes its summary (exit 6, status stopped).
exec pushline run /shared/campaigns/pipelines/winback.yaml \
  --audience /shared/campaigns/audiences/winback.ndjson.gz \
  --output "$results/shard-$SLURM_ARRAY_TASK_ID" \
  --shard-count "$shards" --auto-resume --drain-timeout 30 --log-format json \
  --metrics-file "$results/metrics-shard-$SLURM_ARRAY_TASK_ID.prom"
# After the array: sbatch --dependency=afterany:<array job id> --wrap \
#   "pushline merge-results $results/shard-*/ --output $results/summary.json"
