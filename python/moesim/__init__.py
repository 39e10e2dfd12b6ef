"""moesim from Python: the simulator the `moesim` command runs, in process.

    import moesim
    r = moesim.run("scenarios/default.textproto")
    print(r.step_time_s, r.tflops_per_gpu, r.critical_path_s["compute"])

Every call runs the command line's own code (tools/command_line.h) on the
same arguments, so a result is what `moesim ... --json` prints, to the
last digit: its keys are the result's attributes (`to_dict()` gives them
all). The interpreter lock is released while moesim works, and sweeps and
validations use their own threads as the command does. Bad input raises
`moesim.Error` with the command's one line (the file or flag, the field
and the rule).
"""
import copy
import json
import os
import shlex

from . import _moesim

__all__ = ["Error", "Scenario", "Result", "SweepResult", "run", "memory",
           "sweep", "validate", "advise", "command"]


class Error(Exception):
    """Input moesim refuses: the command line's one-line message."""


def command(*args):
    """The output of `moesim ARGS...` as a string; Error on exit status 2."""
    status, out, err = _moesim.main([str(a) for a in args])
    if status != 0:
        message = err.strip().splitlines()[0] if err.strip() else out.strip()
        if message.startswith("moesim: "):
            message = message[len("moesim: "):]
        raise Error(message or f"moesim exited with status {status}")
    return out


def _flag_value(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _flags(flags):
    """moesim command-line flags from keyword arguments: gbs=4096 is
    --gbs 4096; hierarchical_cp_sizes=[8, 4] is --hierarchical-cp-sizes 8,4;
    True/False are 1/0 (--ep-overlap 1)."""
    args = []
    for key, value in flags.items():
        if value is None:
            continue
        args += ["--" + key.replace("_", "-"), _flag_value(value)]
    return args


def _megatron_value(key, value):
    flag = "--" + key.replace("_", "-")
    if isinstance(value, bool):
        return [f"{flag}={'true' if value else 'false'}"]
    if isinstance(value, (list, tuple)):
        return [flag] + [str(v) for v in value]
    return [flag, str(value)]


# Scenario keys that are moesim's own flags rather than Megatron arguments.
_MOESIM_KEYS = {"model": "model", "system": "system", "num_gpus": "gpus",
                "gpus": "gpus"}


class Scenario:
    """What to simulate, in one of the forms users already have:

    - a scenario file: Scenario("scenarios/default.textproto");
    - a Megatron argument string (a launch line's arguments):
      Scenario("--tensor-model-parallel-size 2 --seq-length 4096 ...",
      model="qwen3-30b-a3b", system="dgx-h100", gpus=16);
    - a dict of Megatron-Core field names, with moesim's model, system and
      num_gpus: Scenario({"model": "qwen3-30b-a3b", "system": "dgx-h100",
      "num_gpus": 16, "tensor_model_parallel_size": 2,
      "expert_model_parallel_size": 8, "seq_length": 4096}).

    Keyword arguments are moesim's command-line flags over it
    (Scenario(path, gbs=4096) is `moesim run PATH --gbs 4096`).
    """

    def __init__(self, source, **flags):
        self._args = []
        if isinstance(source, Scenario):
            self._args = list(source._args)
        elif isinstance(source, dict):
            megatron = []
            for key, value in source.items():
                if key in _MOESIM_KEYS:
                    self._args += ["--" + _MOESIM_KEYS[key], _flag_value(value)]
                else:
                    megatron += _megatron_value(key, value)
            if megatron:
                self._args += ["--megatron-args", shlex.join(megatron)]
        elif isinstance(source, (str, os.PathLike)):
            text = os.fspath(source)
            if text.lstrip().startswith("-"):
                self._args += ["--megatron-args", text]
            else:
                self._args.append(text)
        else:
            raise TypeError("Scenario: a path, a Megatron argument string or "
                            f"a dict, not {type(source).__name__}")
        self._args += _flags(flags)

    def args(self):
        """The command-line arguments naming this scenario."""
        return list(self._args)

    def __repr__(self):
        return "Scenario(" + shlex.join(self._args) + ")"


class Result:
    """A command's JSON output; each key is an attribute."""

    def __init__(self, data):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name):
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key):
        return self._data[key]

    def __dir__(self):
        return sorted(set(self._data) | {"to_dict"})

    def to_dict(self):
        """Every field, as the command's --json prints it."""
        return copy.deepcopy(self._data)

    def __repr__(self):
        keys = ", ".join(list(self._data)[:6])
        return f"Result({keys}, ...)"


class SweepResult(list):
    """A sweep's candidates (Results, in the sweep's order), with the whole
    output in `.summary` (counts, Pareto fronts)."""

    def __init__(self, data):
        super().__init__(Result(layout) for layout in data.get("layouts", []))
        self.summary = Result(data)

    def to_pandas(self):
        """The candidates as a pandas DataFrame (pandas must be installed)."""
        import pandas  # noqa: only where asked for
        return pandas.DataFrame([r.to_dict() for r in self])


def _json(*args):
    return json.loads(command(*args))


def _scenario_args(scenario, flags):
    return Scenario(scenario, **flags).args()


def run(scenario, network="analytical", full=False, every_microbatch=False,
        every_ring_step=False, **flags):
    """Replays one training step (`moesim run ... --json`)."""
    args = ["run"] + _scenario_args(scenario, flags) + ["--json",
                                                        "--network", network]
    if full:
        args.append("--full")
    if every_microbatch:
        args.append("--every-microbatch")
    if every_ring_step:
        args.append("--every-ring-step")
    return Result(_json(*args))


def memory(scenario, **flags):
    """Parameters, FLOPs and memory per stage (`moesim memory ... --json`)."""
    return Result(_json("memory", *_scenario_args(scenario, flags), "--json"))


def advise(scenario, **flags):
    """The optimization walk (`moesim advise ... --json`)."""
    return Result(_json("advise", *_scenario_args(scenario, flags), "--json"))


def sweep(spec, threads=0, **flags):
    """Every candidate of a sweep (`moesim sweep ... --json --no-timing`):
    `spec` a sweep .textproto path, or a dict of sweep flags
    ({"model": "qwen3-235b-a22b", "tp": [1, 2, 4], ...})."""
    args = ["sweep"]
    if isinstance(spec, dict):
        args += _flags(spec)
    elif spec is not None:
        args.append(os.fspath(spec))
    args += _flags(flags) + ["--json", "--no-timing", "-j", str(threads)]
    return SweepResult(_json(*args))


def validate(runs_csv=None, pairs=None, jobs=0):
    """Every measured run replayed and compared (`moesim validate --json`);
    the shipped calibration/runs/runs.csv when `runs_csv` is None."""
    args = ["validate"] + ([os.fspath(runs_csv)] if runs_csv else [])
    if pairs:
        args += ["--pairs", os.fspath(pairs)]
    return Result(_json(*args, "--json", "-j", str(jobs)))
