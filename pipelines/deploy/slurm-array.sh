#!/usr/bin/env bash
# One campaign as 8 shards: a Slurm job array (docs/shards.md). Submit with `sbatch slurm-array.sh`.
# Slurm sets SLURM_ARRAY_TASK_ID (0…7); `--shard-count` reads it, and the number of shards is the
# array's size (SLURM_ARRAY_TASK_COUNT), so `--array` below is the only place to change it. The
# campaign is pipelines/winback.yaml from this repository; the audience and results live on a
# shared file system. `pushline merge-results` combines the summaries when all tasks are done
# (the last lines show how to chain it).
#
# Paths come from the environment when set (sbatch passes the submitting shell's environment),
# else the defaults below: PUSHLINE_BIN, PUSHLINE_PIPELINE, PUSHLINE_AUDIENCE, PUSHLINE_RESULTS,
# APNS_KEY_FILE, FCM_SERVICE_ACCOUNT; PUSHLINE_SHARDS overrides the array's size (to rerun one
# index alone: `PUSHLINE_SHARDS=8 sbatch --array=3 slurm-array.sh`); PUSHLINE_RUN_OPTIONS adds
# `pushline run` options (e.g. "--now 1767225600", the same clock for every shard).
# `#SBATCH` lines cannot read variables: override them with sbatch options
# (`sbatch --output=… --time=…` wins over the lines below).
#SBATCH --job-name=winback-nightly
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=1G
#SBATCH --time=04:00:00
# B: sends SIGTERM to the batch shell, which `exec` below makes pushline itself, 60 s before the
# time limit (Slurm may send it up to a minute earlier: it checks limits twice a minute). Without
# B: Slurm signals only job steps (srun), and there are none. pushline reads no more, drains the
# requests in flight (--drain-timeout 30), writes its results and summary and exits 6 (status
# stopped), well before the limit and Slurm's SIGKILL.
#SBATCH --signal=B:TERM@60
# A requeued task runs this same script again, and --auto-resume continues its run from the
# folder's checkpoint.json. Slurm requeues on a node failure by itself (--requeue); a task stopped
# by the signal above (exit 6) or a full disk (exit 5) is resumed by requeueing it:
#   scontrol requeue <array job id>_<index>
# A task that finished (exit 0, 3 or 7; 4: the audience could not be read) sends nothing when
# requeued and exits with the same code; do not requeue 2 (invalid pipeline), 8 (a provider
# refused the credentials), 9, 13 or 64: fix the cause first (docs/exit-codes.md).
#SBATCH --requeue
# append: a requeued task adds to its log instead of truncating the first run's.
#SBATCH --open-mode=append
#SBATCH --output=/shared/campaigns/results/winback/slurm-%A_%a.log
set -euo pipefail
pushline=${PUSHLINE_BIN:-pushline}
pipeline=${PUSHLINE_PIPELINE:-/shared/campaigns/pipelines/winback.yaml}
audience=${PUSHLINE_AUDIENCE:-/shared/campaigns/audiences/winback.ndjson.gz}
results=${PUSHLINE_RESULTS:-/shared/campaigns/results/winback}
shards=${PUSHLINE_SHARDS:-${SLURM_ARRAY_TASK_COUNT:?submit as a job array: sbatch --array=0-7 slurm-array.sh}}
read -r -a options <<< "${PUSHLINE_RUN_OPTIONS:-}"
export APNS_KEY_FILE=${APNS_KEY_FILE:-/shared/secrets/AuthKey.p8}
export FCM_SERVICE_ACCOUNT=${FCM_SERVICE_ACCOUNT:-/shared/secrets/fcm-service-account.json}
exec "$pushline" run "$pipeline" \
  --audience "$audience" \
  --output "$results/shard-$SLURM_ARRAY_TASK_ID" \
  --shard-count "$shards" --auto-resume --drain-timeout 30 --log-format json \
  --metrics-file "$results/metrics-shard-$SLURM_ARRAY_TASK_ID.prom" ${options[@]+"${options[@]}"}
# After the array (afterany: also when a task failed, so merge-results names it):
#   sbatch --dependency=afterany:<array job id> --wrap \
#     "pushline merge-results /shared/campaigns/results/winback/shard-*/ --output /shared/campaigns/results/winback/summary.json"
