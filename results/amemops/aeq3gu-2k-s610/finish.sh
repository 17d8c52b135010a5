#!/usr/bin/env bash
# Finish the pre-registered AEQ3GU test (README.md): restore the kept run and eval folders into RUNS (default
# runs/audio-rep) where absent, train every run without step_2000.pt (two at a time, one thread each;
# a run with last.pt continues from it), then evaluate all ten on STREAMS held-out streams (default
# 1536, the fifth look; 6144 for the sixth) into amemops_eval/NAME. SEEDS (default "6 7 8 9 10")
# names the seeds trained and evaluated; the seventh look is SEEDS="11 ... 20". Rerunnable: each step resumes.
set -euo pipefail
cd "$(dirname "$0")/../../.."
RUNS=${RUNS:-runs/audio-rep}
MEMGYM=${MEMGYM:-.venv/bin/memgym}
KEPT=results/amemops/aeq3gu-2k-s610/amemops_train
KEPT_EVAL=results/amemops/aeq3gu-2k-s610/amemops_eval
STREAMS=${STREAMS:-1536}
NAME=${NAME:-c-AEQ3GU-2k-s610}
SEEDS=${SEEDS:-6 7 8 9 10}
AE="data.stream.n_initial=3 data.stream.n_update=6 data.stream.n_interference=0 data.stream.n_absent=0
data.stream.distractors=[0] data.stream.offset_seconds=[0.4,0.6] data.stream.query_offset_seconds=[1,2]
data.stream.value_repeats=[3,3] data.stream.excerpt_frames=[8,8] data.stream.frames=640
data.stream.placement_attempts=100 data.stream.gap_distractors=3 data.stream.gap_distractor_draw=uniform
data.stream.distractor_similarity=dissimilar"
export AE MEMGYM RUNS

mkdir -p "$RUNS/amemops_train" "$RUNS/amemops_eval"
for kept in "$KEPT"/*; do
  [ -e "$RUNS/amemops_train/$(basename "$kept")" ] || cp -r "$kept" "$RUNS/amemops_train/"
done
for kept in "$KEPT_EVAL"/*; do  # kept evals: results.jsonl stored gzipped
  eval_dir="$RUNS/amemops_eval/$(basename "$kept")"
  [ -e "$eval_dir" ] && continue
  cp -r "$kept" "$eval_dir" && gunzip "$eval_dir/results.jsonl.gz"
done

train() {  # train MODEL SEED: to step 2,000 unless that checkpoint exists
  local name="$1@AEQ3GU-seed$2"
  [ -f "$RUNS/amemops_train/$name/step_2000.pt" ] && return 0
  # shellcheck disable=SC2086
  "$MEMGYM" train amemops --runs-dir "$RUNS" --no-progress preset=cpu-audio-fresh $AE model="$1" seed="$2" \
    name="$name" stop_step=2000 > "$RUNS/$name.log" 2>&1 && echo "trained $name" || { echo "failed $name: $RUNS/$name.log"; return 1; }
}
export -f train
for seed in $SEEDS; do printf '%s %s\n' kda "$seed" no_erase "$seed"; done | xargs -P 2 -L 1 bash -c 'train "$0" "$1"'

KN=kda@AEQ3GU:no_erase@AEQ3GU
# shellcheck disable=SC2086
"$MEMGYM" eval amemops --runs-dir "$RUNS" preset=cpu-audio-fresh $AE models=[kda@AEQ3GU,no_erase@AEQ3GU] \
  seeds="[${SEEDS// /,}]" checkpoints=[2000] threads=2 breakdowns=[intervening] contrasts=[$KN] \
  update_interactions=[$KN] streams="$STREAMS" name="$NAME"
