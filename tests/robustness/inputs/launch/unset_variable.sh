MODEL_ARGS=(
  --num-layers 2 --hidden-size 64 --num-attention-heads 4 --vocab-size 1000
  --num-experts ${NUM_EXPERTS}
)
