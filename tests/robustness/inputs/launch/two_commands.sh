torchrun pretrain_gpt.py --num-layers 2
torchrun pretrain_gpt.py --num-layers 4
