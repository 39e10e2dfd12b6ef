# source: NVIDIA-NeMo/Megatron-Bridge@067f987df0:examples/models/deepseek_v4/slurm_pretrain.sh
# model: DeepSeek-V4-Flash (recipe deepseek_v4_flash_pretrain_mxfp8_config)
MODEL_NAME=deepseek_v4_flash
HF_CONFIG=deepseek-ai/DeepSeek-V4-Flash
RECIPE_NAME=deepseek_v4_flash_pretrain_mxfp8_config       # Adam MXFP8
# RECIPE_NAME=deepseek_v4_flash_pretrain_muon_config      # Muon BF16

DATASET_NAME=dclm  # set to "mock" for mock data
SEQ_LENGTH=4096

# When DATASET_NAME=dclm, set DCLM_DATA_DIR and DCLM_CACHE so the recipe uses DCLM.
if [ "$DATASET_NAME" = "dclm" ]; then
    # export DCLM_DATA_DIR="/path/to/dclm/preprocessed"
    # export DCLM_CACHE="/path/to/cache"
    :
else
    unset DCLM_DATA_DIR
    unset DCLM_CACHE
fi

TRAIN_ITERS=1000
GLOBAL_BATCH_SIZE=128
MICRO_BATCH_SIZE=1
EVAL_INTERVAL=100
EVAL_ITERS=10
LR_WARMUP_ITERS=50
SAVE_INTERVAL=300
LOG_INTERVAL=1
WANDB_PROJECT=megatron-bridge-dsv4

# TP,PP,EP,CP. The default targets 8 GB200 nodes with 4 GPUs per node.
PARALLELISM_CONFIG=${PARALLELISM_CONFIG:-1,4,8,1}
OLD_IFS=$IFS
IFS=',' read -r TP PP EP CP <<< "$PARALLELISM_CONFIG"
IFS=$OLD_IFS

NNODES=${SLURM_JOB_NUM_NODES:-8}
NPROC_PER_NODE=${SLURM_GPUS_PER_NODE:-4}
MASTER_PORT=${MASTER_PORT:-29571}
MASTER_ADDR=$(python3 - <<'PY'
import os
import re

nodelist = os.environ.get("SLURM_NODELIST", "")
match = re.match(r"([\w-]+)\[(\d+)", nodelist)
print(match.group(1) + match.group(2) if match else (nodelist.split(",")[0] if nodelist else "localhost"))
PY
)

RUN_NAME=${MODEL_NAME}_${DATASET_NAME}_${RECIPE_NAME}_tp${TP}_pp${PP}_ep${EP}_cp${CP}_${SLURM_JOB_ID:-manual}
CHECKPOINT_DIR=${WORKSPACE}/results/${RUN_NAME}/checkpoints

CLI_OVERRIDES=" \
    model.seq_length=$SEQ_LENGTH \
    dataset.seq_length=$SEQ_LENGTH \
    train.train_iters=$TRAIN_ITERS \
    train.global_batch_size=$GLOBAL_BATCH_SIZE \
    train.micro_batch_size=$MICRO_BATCH_SIZE \
    validation.eval_interval=$EVAL_INTERVAL \
    validation.eval_iters=$EVAL_ITERS \
    scheduler.lr_warmup_iters=$LR_WARMUP_ITERS \
    scheduler.lr_decay_iters=$TRAIN_ITERS \
    checkpoint.save=$CHECKPOINT_DIR \
    checkpoint.save_interval=$SAVE_INTERVAL \
    logger.log_interval=$LOG_INTERVAL \
    logger.wandb_project=$WANDB_PROJECT \
    logger.wandb_exp_name=$RUN_NAME \
    model.tensor_model_parallel_size=$TP \
    model.pipeline_model_parallel_size=$PP \
    model.expert_model_parallel_size=$EP \
    model.context_parallel_size=$CP \
    $RECIPE_OVERRIDES \
    $DCLM_DATASET_OVERRIDES"

CMD="uv run --no-sync python -m torch.distributed.run \
    --nproc_per_node=$NPROC_PER_NODE \
    --nnodes=$NNODES \
    --node_rank=\$SLURM_PROCID \
    --master_addr=$MASTER_ADDR \
    --master_port=$MASTER_PORT \
    /opt/Megatron-Bridge/scripts/training/run_recipe.py \
    --recipe $RECIPE_NAME \
    --dataset $DATASET_TYPE \
    --step_func gpt_step \
    $CLI_OVERRIDES"
