# source: NVIDIA-NeMo/Megatron-Bridge@067f987df0:examples/models/stepfun/step35/slurm_pretrain.sh
# model: Step-3.5-Flash (recipe step35_196b_a11b_pretrain_config)
TEST_NAME=${TEST_NAME:-step35_pretrain_pp16}
LOG_DIR=${LOG_DIR:-${WORKSPACE}/logs}
mkdir -p "${LOG_DIR}"

# Recipe defaults; override on the sbatch command line via env to tune.
SEQ_LENGTH=${SEQ_LENGTH:-4096}
MICRO_BATCH_SIZE=${MICRO_BATCH_SIZE:-1}
GLOBAL_BATCH_SIZE=${GLOBAL_BATCH_SIZE:-1024}
TRAIN_ITERS=${TRAIN_ITERS:-20}
LOG_INTERVAL=${LOG_INTERVAL:-1}
WANDB_PROJECT=${WANDB_PROJECT:-megatron-bridge-step35}
CLI_OVERRIDES="\
    model.seq_length=${SEQ_LENGTH} \
    model.pipeline_model_parallel_size=8 \
    model.num_layers_in_last_pipeline_stage=3 \
    model.tensor_model_parallel_size=1 \
    model.expert_model_parallel_size=8 \
    model.expert_tensor_parallel_size=1 \
    model.context_parallel_size=1 \
    model.sequence_parallel=False \
    model.variable_seq_lengths=True \
    model.moe_token_dispatcher_type=alltoall \
    model.moe_permute_fusion=False \
    model.mtp_num_layers=0 \
    model.attention_dropout=0.0 \
    model.rotary_percent=0.5 \
    model.window_size=[512,0] \
    model.window_attn_skip_freq=[0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1,0,1,1,1] \
    train.micro_batch_size=${MICRO_BATCH_SIZE} \
    train.global_batch_size=${GLOBAL_BATCH_SIZE} \
    train.train_iters=${TRAIN_ITERS} \
    train.eval_iters=0 \
    train.manual_gc=true \
    train.manual_gc_interval=100 \
    logger.tensorboard_dir=${LOG_DIR}/tensorboard/${TEST_NAME}/ \
    logger.wandb_save_dir=${LOG_DIR}/wandb/${TEST_NAME}/ \
    logger.wandb_project=${WANDB_PROJECT} \
    logger.wandb_exp_name=${TEST_NAME} \
    logger.log_interval=${LOG_INTERVAL} \
    logger.log_memory_to_tensorboard=true \
    logger.log_throughput_to_tensorboard=true \
    checkpoint.save_interval=0 \
    checkpoint.pretrained_checkpoint=${PRETRAINED_CHECKPOINT} \
    checkpoint.finetune=true \
    checkpoint.exit_on_missing_checkpoint=true \
    checkpoint.load_optim=false \
    checkpoint.load_rng=false \
    checkpoint.fully_parallel_load=true \
    checkpoint.ckpt_assume_constant_structure=true"

# Inline script run on every srun task. Each task is one rank.
read -r -d '' INNER_SCRIPT <<'EOF' || true
set -euo pipefail
export MASTER_ADDR=$(scontrol show hostnames "${SLURM_JOB_NODELIST}" | head -n1)
export RANK=${SLURM_PROCID}
export WORLD_SIZE=${SLURM_NTASKS}
export LOCAL_RANK=${SLURM_LOCALID}
echo "[rank ${RANK}] MASTER_ADDR=${MASTER_ADDR} MASTER_PORT=${MASTER_PORT} WORLD_SIZE=${WORLD_SIZE} LOCAL_RANK=${LOCAL_RANK}"

cd "${MEGATRON_BRIDGE_PATH}"
uv run --no-sync python scripts/training/run_recipe.py \
    --recipe step35_196b_a11b_pretrain_config \
