"""The Python API (python/moesim) against the moesim binary: the same
arguments must give the same output to the last digit, and the same error
line. Run by ctest (python_api) with PYTHONPATH at build/python and
MOESIM_BINARY at build/moesim."""
import glob
import json
import os
import subprocess

import pytest

import moesim

SOURCE = os.environ.get("MOESIM_SOURCE_DIR", os.getcwd())
BINARY = os.environ.get("MOESIM_BINARY", os.path.join(SOURCE, "build", "moesim"))
SEEDS = sorted([os.path.join(SOURCE, "scenarios", "default.textproto")] +
               glob.glob(os.path.join(SOURCE, "scenarios", "seeds", "*.textproto")))


def cli(*args):
    p = subprocess.run([BINARY, *args], capture_output=True, text=True,
                       cwd=SOURCE)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    status, out, err = cli(*args)
    assert status == 0, err
    return json.loads(out)


@pytest.mark.parametrize("seed", SEEDS, ids=os.path.basename)
def test_run_matches_the_cli_on_every_seed(seed):
    api = moesim.run(seed)
    assert api.to_dict() == cli_json("run", seed, "--json", "--network",
                                     "analytical")
    assert api.step_time_s > 0 and api.tflops_per_gpu > 0


def test_flags_full_mode_and_flow_network_match_the_cli():
    seed = os.path.join(SOURCE, "scenarios", "seeds", "qwen3-next-8k-gb200.textproto")
    api = moesim.run(seed, network="flow", full=True, gbs=64)
    assert api.to_dict() == cli_json("run", seed, "--gbs", "64", "--json",
                                     "--network", "flow", "--full")
    assert api.mode == "full"


def test_every_ring_step_matches_the_cli():
    # The Qwen3-Next 64K seed's CP8 p2p ring: its steady steps run as one
    # op of each kind unless every_ring_step; the step is the same.
    seed = os.path.join(SOURCE, "scenarios", "seeds",
                        "qwen3-next-64k-gb200.textproto")
    merged = moesim.run(seed)
    every = moesim.run(seed, every_ring_step=True)
    assert every.to_dict() == cli_json("run", seed, "--json", "--network",
                                       "analytical", "--every-ring-step")
    assert merged.cp_ring["merged_steps"] == 5
    assert every.cp_ring["merged_steps"] == 0
    assert merged.step_time_s == every.step_time_s
    assert merged.ops < every.ops


def test_zero_bubble_schedule_matches_the_cli(tmp_path):
    # Llama 3 8B on 8 H100s, TP2 PP4, 16 micro-batches: ZB-H1 as a keyword
    # is the CLI's --pipeline-schedule, and shortens the 1F1B step.
    spec = tmp_path / "llama.textproto"
    spec.write_text('model: "llama3-8b" system: "dgx-h100" num_gpus: 8 '
                    'layout { tensor_model_parallel_size: 2 '
                    'pipeline_model_parallel_size: 4 global_batch_size: 16 }')
    one_f_one_b = moesim.run(str(spec))
    zb = moesim.run(str(spec), pipeline_schedule="zb-h1")
    assert zb.to_dict() == cli_json("run", str(spec), "--pipeline-schedule",
                                    "zb-h1", "--json", "--network",
                                    "analytical")
    assert zb.scenario["pipeline_schedule"] == "zb-h1"
    assert one_f_one_b.scenario["pipeline_schedule"] == "1f1b"
    assert zb.step_time_s < one_f_one_b.step_time_s


def test_memory_matches_the_cli():
    seed = SEEDS[0]
    assert moesim.memory(seed).to_dict() == cli_json("memory", seed, "--json")


# A dict of Megatron-Core field names is the Megatron argument string its
# names spell (--tensor-model-parallel-size 2 ...), with moesim's model,
# system and GPU count as flags.
def test_dict_scenario_is_its_megatron_arguments():
    fields = {"model": "qwen3-30b-a3b", "system": "dgx-h100", "num_gpus": 16,
              "tensor_model_parallel_size": 2,
              "expert_model_parallel_size": 8, "seq_length": 4096,
              "micro_batch_size": 1, "global_batch_size": 256}
    args = ("--tensor-model-parallel-size 2 --expert-model-parallel-size 8 "
            "--seq-length 4096 --micro-batch-size 1 --global-batch-size 256")
    from_dict = moesim.run(fields)
    from_args = moesim.run(args, model="qwen3-30b-a3b", system="dgx-h100",
                           gpus=16)
    assert from_dict.to_dict() == from_args.to_dict()
    assert from_dict.to_dict() == cli_json(
        "run", "--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
        "16", "--megatron-args", args, "--json")
    layout = from_dict.scenario["layout"]
    assert (layout["tp"], layout["ep"], layout["dp"]) == (2, 8, 8)


def test_bad_input_raises_the_cli_line():
    seed = SEEDS[0]
    status, _, err = cli("run", seed, "--gpus", "3", "--json")
    assert status == 2
    with pytest.raises(moesim.Error) as raised:
        moesim.run(seed, gpus=3)
    assert "moesim: " + str(raised.value) == err.strip()
    assert str(raised.value).startswith("flags: --gpus: ")


def test_unknown_file_names_the_file():
    with pytest.raises(moesim.Error, match="no-such.textproto"):
        moesim.run("no-such.textproto")


def test_sweep_matches_the_cli():
    spec = {"model": "qwen3-30b-a3b", "system": "dgx-h100", "gpus": 16,
            "seq": 4096, "tp": "1,2", "ep": "4,8", "gbs": 128}
    api = moesim.sweep(spec, threads=2)
    flags = ["--model", "qwen3-30b-a3b", "--system", "dgx-h100", "--gpus",
             "16", "--seq", "4096", "--tp", "1,2", "--ep", "4,8", "--gbs",
             "128"]
    whole = cli_json("sweep", *flags, "--json", "--no-timing", "-j", "1")
    assert [r.to_dict() for r in api] == whole["layouts"]
    assert api.summary.counts == whole["counts"]
    assert len(api) == whole["evaluated"]


# The interpreter lock is released while moesim works: a thread running a
# sweep leaves the main thread free to run Python meanwhile (with the lock
# held it would get no turn until the sweep returned).
def test_the_interpreter_runs_while_moesim_works():
    import threading
    spec = os.path.join(SOURCE, "scenarios", "sweeps",
                        "qwen3-235b-gb200-nvl72-cp-vs-tp.textproto")
    worker = threading.Thread(target=moesim.sweep, args=(spec,),
                              kwargs={"threads": 1})
    turns = 0
    worker.start()
    while worker.is_alive():
        turns += 1
    worker.join()
    assert turns > 10000


def test_sweep_to_pandas_has_every_candidate():
    pandas = pytest.importorskip("pandas")  # Debian: python3-pandas
    spec = {"model": "qwen3-30b-a3b", "system": "dgx-h100", "gpus": 16,
            "seq": 4096, "tp": "1,2", "ep": "4,8", "gbs": 128}
    result = moesim.sweep(spec, threads=1)
    frame = result.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert len(frame) == len(result) == 4
    assert list(frame["verdict"]) == [r.verdict for r in result]


def test_validate_matches_the_cli():
    api = moesim.validate(jobs=2)
    assert api.to_dict() == cli_json("validate", "--json", "-j", "2")
    assert api.mape_pct > 0 and len(api.rows) > 100
