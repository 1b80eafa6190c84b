#!/usr/bin/env bash
# The live-LLM measurement of docs/results.md ("LLM steps with a live model"): every LLM method
# on SpiderUnion and BirdUnion with three sources of its LLM step side by side: the papers'
# recorded outputs, the offline rewriter, and Gemma 3 270M live in a llama.cpp server on this
# machine (tabret[local-llm]). MiniLM embeddings. Writes build/live-llm/<bench>-<method>-<llm>.txt
# and the live answers into bench/recordings/gemma3-270m-<bench>.jsonl.gz (committed), a
# recording that `--llm replay --llm-replay FILE` answers from without the model:
#
#   bench/live_llm.sh            # live runs (a model server), then recorded and offline
#   LLM=replay bench/live_llm.sh # the same table from the saved recordings, no model
#
# FIRST (default 200) and MURRE_FIRST (default 100 on SpiderUnion, 50 on BirdUnion: up to 10
# LLM requests per question) cut the questions; every run of one benchmark and method scores
# the same questions. CRUSH on BIRD runs on bird-union-crush (the BirdUnion questions CRUSH
# recorded a hallucination for), so that its recorded row exists.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/live-llm}
FIRST=${FIRST:-200}
LLM=${LLM:-local}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1
COMMON=(--embedding-cache "${EMBEDDING_CACHE:-$OUT/embeddings}" --quiet
        --k 3 5 10 20)

run() {  # run BENCH METHOD LLM-SOURCE
  local bench=$1 method=$2 source=$3 first=$FIRST extra=() data=$1
  if [[ $method == murre ]]; then
    first=${MURRE_FIRST:-100}
    [[ $bench == bird-union ]] && first=${MURRE_FIRST:-50}
  fi
  [[ $method == crush && $bench == bird-union ]] && data=bird-union-crush
  local recording="${RECORDINGS:-bench/recordings}/gemma3-270m-$bench.jsonl.gz"
  case $source in
    local) extra=(--llm local --llm-cache "$OUT/responses.sqlite" --llm-record "$recording") ;;
    replay) extra=(--llm replay --llm-replay "$recording") ;;
    *) extra=(--llm "$source") ;;
  esac
  local label=$source
  [[ $source == replay ]] && label=local
  echo "== $bench $method $source (first $first)" >&2
  python3 -m tabret eval --benchmark "$data" --method "$method" --first "$first" \
    "${COMMON[@]}" "${extra[@]}" >"$OUT/$bench-$method-$label.txt"
}

for bench in spider-union bird-union; do
  for method in greedy-join crush reverse murre; do
    run "$bench" "$method" "$LLM"
  done
done
if [[ $LLM == local ]]; then
  for bench in spider-union bird-union; do
    for method in greedy-join crush murre; do run "$bench" "$method" recorded; done  # no RE recording
    for method in greedy-join crush reverse murre; do run "$bench" "$method" offline; done
  done
fi
python3 bench/live_llm_table.py "$OUT"
