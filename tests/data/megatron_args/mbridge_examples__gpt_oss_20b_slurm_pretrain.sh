# source: NVIDIA-NeMo/Megatron-Bridge@067f987df0:examples/models/gpt_oss/slurm_pretrain.sh
# model: GPT-OSS 20B (recipe gpt_oss_20b_pretrain_config)
MODEL_NAME=gpt_oss_20b
RECIPE_NAME="${RECIPE_NAME:-${MODEL_NAME}_pretrain_config}"               # bf16 (default)
# RECIPE_NAME="${MODEL_NAME}_pretrain_fp8_current_scaling_config"           # Hopper FP8 current scaling
# RECIPE_NAME="${MODEL_NAME}_pretrain_mxfp8_config"                        # Blackwell MXFP8
DATASET_NAME=dclm  # set to "mock" for mock data; "dclm" uses DCLM when DCLM_DATA_DIR/DCLM_CACHE are set below
SEQ_LENGTH=4096

# When DATASET_NAME=dclm, set DCLM_DATA_DIR and DCLM_CACHE so the recipe uses DCLM; leave unset for mock
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
EVAL_ITERS=10
LR_WARMUP_ITERS=50
LOG_INTERVAL=1
WANDB_PROJECT=megatron-bridge-${DATASET_NAME}

# Parallelism configs: "TP,PP,EP,CP,SP" per entry (max(TP*CP, EP)*PP must be divisible by the total number of GPUs)
PARALLELISM_CONFIGS=("2,4,4,1,True" "4,2,4,1,True" "2,4,4,2,True")
export CUDA_DEVICE_MAX_CONNECTIONS=1
CONFIG_INDEX=0
JOB_EXIT=0
for CONFIG in "${PARALLELISM_CONFIGS[@]}"; do
    OLD_IFS=$IFS
    IFS=',' read -r TP PP EP CP SP <<< "$CONFIG"
    IFS=$OLD_IFS

    CONFIG_INDEX=$((CONFIG_INDEX + 1))
    
    echo ""
    echo "======================================"
    echo "Config $CONFIG_INDEX/${#PARALLELISM_CONFIGS[@]}: TP=$TP, PP=$PP, EP=$EP, SP=$SP, CP=$CP"
    echo "======================================"

    # Build CLI overrides for this config
    CLI_OVERRIDES=" \
        model.seq_length=$SEQ_LENGTH \
        train.train_iters=$TRAIN_ITERS \
        train.global_batch_size=$GLOBAL_BATCH_SIZE \
        train.micro_batch_size=$MICRO_BATCH_SIZE \
        train.eval_iters=$EVAL_ITERS \
        scheduler.lr_warmup_iters=$LR_WARMUP_ITERS \
        checkpoint.save=${WORKSPACE}/results/${MODEL_NAME}_pretrain_tp${TP}_pp${PP}_ep${EP}_sp${SP}_cp${CP} \
        logger.log_interval=$LOG_INTERVAL \
        logger.wandb_project=$WANDB_PROJECT \
        logger.wandb_exp_name=${MODEL_NAME}_${DATASET_NAME}_pretrain_tp${TP}_pp${PP}_ep${EP}_sp${SP}_cp${CP} \
        dataset.seq_length=$SEQ_LENGTH \
        model.tensor_model_parallel_size=$TP \
        model.pipeline_model_parallel_size=$PP \
        model.expert_model_parallel_size=$EP \
        model.sequence_parallel=$SP \
        model.context_parallel_size=$CP \
    "
    if [ -n "$DCLM_DATASET_OVERRIDES" ]; then
        CLI_OVERRIDES="$CLI_OVERRIDES $DCLM_DATASET_OVERRIDES"
    fi
    CMD="uv run --no-sync python /opt/Megatron-Bridge/scripts/training/run_recipe.py"
    CMD="$CMD --recipe ${RECIPE_NAME}"
    CMD="$CMD $CLI_OVERRIDES"
