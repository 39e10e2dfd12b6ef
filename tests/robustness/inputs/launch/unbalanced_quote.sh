ARGS="--num-layers 2
  --hidden-size 64
