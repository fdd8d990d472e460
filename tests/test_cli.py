"""The `rlnb` console script, as a user runs it."""
import json
import os
import shutil
import subprocess
import sys

from conftest import ROOT

RLNB = shutil.which("rlnb", path=os.path.dirname(sys.executable)) or "rlnb"


def run(*args, timeout=300):
    return subprocess.run([RLNB, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_smoke_prints_json_over_all_devices():
    proc = run("smoke", "--env", "CartPole-v1", "--steps", "400")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["steps"] == 400 and out["episodes"] >= 1
    assert out["devices"] == 8  # conftest's XLA_FLAGS reach the child


def test_unknown_env_exits_2_with_hint():
    proc = run("smoke", "--env", "CartPol-v1")
    assert proc.returncode == 2
    assert "unknown gymnasium env id 'CartPol-v1'" in proc.stderr and "Did you mean CartPole-v1" in proc.stderr


def test_shipped_preset_whose_env_package_is_missing_names_the_extra():
    "Issue 30: without Box2D, `rlnb train ppo --env LunarLander-v3` (a shipped preset) says what to install, not that the id is unknown."
    import importlib.util
    if importlib.util.find_spec("Box2D") is not None:
        import pytest
        pytest.skip("Box2D is installed here (tests/test_bad_inputs.py covers the message by hiding the module)")
    proc = run("train", "ppo", "--env", "LunarLander-v3")
    assert proc.returncode == 2, proc.stderr
    assert 'env id \'LunarLander-v3\' needs Box2D, which is not installed here: pip install "rlnb[box2d]"' in proc.stderr, proc.stderr
    assert "unknown" not in proc.stderr.lower() and "Did you mean" not in proc.stderr
    presets = run("presets")
    row = [l for l in presets.stdout.splitlines() if l.startswith("ppo-LunarLander-v3")][0]
    assert presets.returncode == 0 and row.endswith("[not here: needs rlnb[box2d]]"), presets.stdout


def test_bad_option_exits_2():
    proc = run("smoke", "--steps", "-5")
    assert proc.returncode == 2 and "--steps must be a positive integer" in proc.stderr


def test_readme_in_step_with_index_notebook():
    proc = subprocess.run([sys.executable, "tools/readme.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_readme_has_exactly_the_two_commands():
    text = (ROOT / "README.md").read_text()
    blocks = [b.split("```")[0].strip() for b in text.split("```sh\n")[1:]]
    assert blocks == ['pip install -e . && rlnb train apex-dqn --env CartPole-v1', 'pip install -e ".[dev]" && pytest -m "not slow" -n auto'], blocks


import pathlib
import re
import signal
import threading
import time

import psutil
import pytest


@pytest.mark.slow
def test_train_default_solves_cartpole(tmp_path):
    "The README's main job: Ape-X DQN with the defaults reaches an evaluation return >= 475 on CartPole-v1."
    proc = run("train", "apex-dqn", "--env", "CartPole-v1", "--out", str(tmp_path), "--no-progress", timeout=1200)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["eval_return"] >= 475, out
    assert out["devices"] == 8
    for name in ("metrics.csv", "curve.png", "result.json"):
        assert (tmp_path / name).stat().st_size > 0
    assert out["checkpoint"].startswith(str(tmp_path / "checkpoints")) and list((tmp_path / "tb").glob("events.out.tfevents.*"))


def _wait_for(cond, timeout, p, lines=None, running=True):
    "Poll `cond` until it holds; fail if `p` ended first (with `running`) or after `timeout` s. `lines`: p's stderr, when a thread reads it."
    t0 = time.monotonic()
    while not cond():
        err = lambda: ''.join(lines)[-3000:] if lines is not None else p.stderr.read()[-3000:]
        if running: assert p.poll() is None, err()
        assert time.monotonic() - t0 < timeout, f"timed out; stderr: {err() if lines is not None else ''}"
        time.sleep(0.05)


def _logged_steps(run_dir) -> int:
    "The env steps of the last row of a run's metrics.csv (0 before the first row)."
    try: rows = (run_dir / "metrics.csv").read_text().splitlines()
    except FileNotFoundError: return 0
    if len(rows) < 2: return 0
    header, last = rows[0].split(","), rows[-1].split(",")
    try: return int(float(last[header.index("env_steps")]))
    except (ValueError, IndexError): return 0


@pytest.mark.slow
def test_sigint_stops_training_cleanly_with_a_checkpoint_then_eval_and_resume(tmp_path):
    """Ctrl-C during training: exit code 130, a checkpoint of that moment, nothing left running; the run evaluates and resumes.

    Every wait is for something the run shows (a checkpoint file, a metrics row, the handler's message on stderr), with
    bounds that only catch a hang, so that the test means the same on a machine several times slower than this one. The run
    has no target (it cannot end on its own before the signal) and logs a metrics row every 0.2 s."""
    p = subprocess.Popen([RLNB, "train", "apex-dqn", "--env", "CartPole-v1", "--out", str(tmp_path), "--no-progress", "--target-return", "none",
                          "--num-actors", "2", "--save-interval", "1000", "--eval-interval", "1000", "--eval-episodes", "2", "--log-interval", "0.2"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ckpts = lambda: sorted((tmp_path / "checkpoints").glob("ckpt-*.msgpack"))
    lines = []  # stderr, read as it comes
    reader = threading.Thread(target=lambda: lines.extend(iter(p.stderr.readline, '')), daemon=True)
    reader.start()
    try:
        _wait_for(lambda: len(ckpts()) >= 1, 600, p, lines)  # compiled, trained 1,000 steps and saved
        first = int(ckpts()[0].stem.split("-")[1])
        _wait_for(lambda: _logged_steps(tmp_path) > first, 600, p, lines)  # and trained on past it: mid-run
        children = psutil.Process(p.pid).children(recursive=True)
        at_signal = _logged_steps(tmp_path)
        p.send_signal(signal.SIGINT)
        _wait_for(lambda: any("SIGINT: stopping" in l for l in lines), 120, p, lines, running=False)  # the handler took it
        p.wait(timeout=300)  # a bound that catches a hang, not a speed claim
        reader.join(10)
        err = ''.join(lines)
        assert p.returncode == 130, err[-3000:]
        assert "interrupted" in err and "--resume" in err, err[-3000:]
        # the checkpoint of that moment: the newest, named in the message, holding the steps the message names, at least those
        # logged before the signal (with a save every 1,000 steps the signal can land just after one, which is then that moment's)
        m = re.search(r"interrupted at ([\d,]+) env steps.*checkpoint (\S+?);", err)
        assert m, err[-3000:]
        last, stopped_at = ckpts()[-1], int(m.group(1).replace(",", ""))
        assert pathlib.Path(m.group(2)) == last and int(last.stem.split("-")[1]) == stopped_at >= at_signal, (last, stopped_at, at_signal, err[-3000:])
        assert not [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    finally:
        if p.poll() is None:
            p.kill()
    last = ckpts()[-1]
    assert last.stat().st_size > 0 and not list((tmp_path / "checkpoints").glob(".ckpt-*"))
    proc = run("eval", str(tmp_path), "--episodes", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ev = json.loads(proc.stdout.strip().splitlines()[-1])
    assert ev["checkpoint"] == str(last) and ev["episodes"] == 2 and ev["eval_return"] >= 1, ev  # it evaluates (no learning claim after ~1,000 steps)
    steps = ev["env_steps"]
    proc = run("train", "apex-dqn", "--resume", str(tmp_path), "--num-actors", "2", "--steps", str(steps + 500),
               "--eval-episodes", "2", "--no-progress")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["run_dir"] == str(tmp_path) and out["env_steps"] >= steps + 500, out
    assert "final evaluation" in proc.stdout and out["checkpoint"] in proc.stdout


def test_eval_and_train_bad_options_exit_2(tmp_path):
    for args, msg in [(("eval", str(tmp_path / "nothing")), "no checkpoint or run directory"),
                      (("eval", str(tmp_path), "--episodes", "0"), "--episodes must be a positive integer"),
                      (("train", "apex-dqn", "--save-interval", "-1"), "--save-interval must be a positive integer"),
                      (("train", "apex-dqn", "--resume", str(tmp_path)), "holds no checkpoint"),
                      (("train", "apex-dqn", "--env", "CartPol-v1"), "Did you mean CartPole-v1")]:
        proc = run(*args)
        assert proc.returncode == 2 and msg in proc.stderr, (args, proc.stderr[-2000:])


@pytest.mark.slow
@pytest.mark.parametrize("sig,presses,code", [(signal.SIGTERM, 1, 143), (signal.SIGINT, 2, 130)])
def test_sigterm_and_double_ctrl_c_end_with_a_checkpoint(tmp_path, sig, presses, code):
    "SIGTERM (a scheduler, `docker stop`) and Ctrl-C pressed twice both end the run with a checkpoint of that moment, the shell's exit code (143, 130), and no process left behind."
    p = subprocess.Popen([RLNB, "train", "apex-dqn", "--env", "CartPole-v1", "--out", str(tmp_path), "--no-progress", "--actor-mode", "process",
                          "--num-actors", "2", "--save-interval", "1000", "--eval-interval", "100000", "--target-return", "none"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ckpts = lambda: sorted((tmp_path / "checkpoints").glob("ckpt-*.msgpack"))
    try:
        _wait_for(lambda: len(ckpts()) >= 1, 300, p)
        children = psutil.Process(p.pid).children(recursive=True)
        assert len(children) >= 2  # the actors' env processes
        lines = []  # stderr, read as it comes: the second press follows the first one's message, as a user's would
        reader = threading.Thread(target=lambda: lines.extend(iter(p.stderr.readline, '')), daemon=True)
        reader.start()
        p.send_signal(sig)
        if presses == 2:
            # two signals sent before Python's handler runs would reach it as one (the OS does not queue them)
            t0 = time.monotonic()
            while not any(f"{sig.name}: stopping" in l for l in lines) and p.poll() is None and time.monotonic() - t0 < 60:
                time.sleep(0.005)
            p.send_signal(sig)
        p.wait(timeout=60)  # a bound that catches a hang, not a speed claim
        reader.join(10)
        err = ''.join(lines)
        assert p.returncode == code, (p.returncode, err[-3000:])
        # the checkpoint the message names holds the run at the moment it stopped (a new file, unless no step was taken
        # since the last periodic save, which then is that moment)
        m = re.search(r"interrupted at ([\d,]+) env steps.*checkpoint (\S+?);", err)
        assert m and "--resume" in err, err[-3000:]
        named = pathlib.Path(m.group(2))
        from rlnb.agent.agent import read_checkpoint
        assert named == ckpts()[-1] and read_checkpoint(named)["env_steps"] == int(m.group(1).replace(",", "")), (named, ckpts(), err[-3000:])
        assert f"rlnb: {sig.name}: stopping" in err and (presses == 1 or "still stopping" in err), err[-3000:]
        alive = lambda: [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        t0 = time.monotonic()
        while alive() and time.monotonic() - t0 < 10: time.sleep(0.1)  # children see their parent go and exit on their own time
        assert not alive(), [" ".join(c.cmdline()) for c in alive()]
    finally:
        if p.poll() is None:
            p.kill()
    assert not list((tmp_path / "checkpoints").glob(".ckpt-*"))


@pytest.mark.slow
def test_training_fault_exits_1_naming_the_checkpoint(tmp_path):
    "A fault while training (here: an env that raises, with no restarts allowed) is not a usage error: exit 1, the error, and the checkpoint it left."
    script = ("import gymnasium as gym, sys\n"
              "from rlnb.cli import main\n"
              "class Breaks(gym.Wrapper):\n"
              "    n = 0\n"
              "    def step(self, a):\n"
              "        Breaks.n += 1\n"
              "        if Breaks.n > 500: raise RuntimeError('sensor unplugged')\n"
              "        return self.env.step(a)\n"
              "gym.register('Breaks-v0', entry_point=lambda: Breaks(gym.make('CartPole-v1')))\n"
              "sys.exit(main(sys.argv[1:]))\n")
    proc = subprocess.run([sys.executable, "-c", script, "train", "apex-dqn", "--env", "Breaks-v0", "--out", str(tmp_path), "--no-progress",
                           "--max-restarts", "0", "--num-actors", "1"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    ckpt = sorted((tmp_path / "checkpoints").glob("ckpt-*.msgpack"))[-1]
    assert "rlnb: error: [env-worker-0/sync] env failed during step: RuntimeError: sensor unplugged" in proc.stderr, proc.stderr[-3000:]
    assert f"checkpoint {ckpt} holds it" in proc.stderr


@pytest.mark.slow
def test_wandb_offline_run_logs_the_training_rows(tmp_path):
    "`--wandb` with WANDB_MODE=offline: one offline W&B run under the run directory, its summary at the run's last env step."
    pytest.importorskip("wandb", reason="the wandb extra is not installed")
    env = {**os.environ, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    proc = subprocess.run([RLNB, "train", "apex-dqn", "--env", "CartPole-v1", "--steps", "1200", "--eval-interval", "600",
                           "--eval-episodes", "2", "--out", str(tmp_path), "--no-progress", "--wandb", "--wandb-project", "rlnb-tests"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    from rlnb.agent.agent import read_wandb_offline
    logged = read_wandb_offline(tmp_path)
    assert logged["summary"]["_step"] == result["env_steps"] and logged["summary"]["eval/eval_return"] == result["eval_return"]
    assert (logged["config"]["preset"], logged["config"]["seed"]) == ("apex-dqn-CartPole-v1", 0)  # the preset it picked


def test_presets_listed_and_picked_by_env(tmp_path):
    "`rlnb presets` lists the shipped presets with their measured results; `rlnb train` names the preset it picked."
    proc = run("presets", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(l) for l in proc.stdout.splitlines()]
    assert {"apex-dqn-MountainCar-v0", "ppo-CartPole-v1", "sac-Pendulum-v1"} <= {r["name"] for r in rows}
    proc = run("train", "apex-dqn", "--env", "Acrobot-v1", "--steps", "300", "--eval-interval", "300", "--eval-episodes", "1",
               "--out", str(tmp_path), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "rlnb: preset apex-dqn-Acrobot-v1" in proc.stderr


def test_minatar_env_takes_its_preset(tmp_path):
    "Issue 33: `rlnb train apex-dqn --env MinAtar/Breakout-v1` takes the game's shipped preset (not the image family's, not CartPole's defaults); flags win over it."
    import pytest
    pytest.importorskip("minatar", reason="the atari extra is not installed")
    proc = run("train", "apex-dqn", "--env", "MinAtar/Breakout-v1", "--steps", "300", "--buffer-warmup", "100", "--eval-interval", "300",
               "--eval-episodes", "1", "--out", str(tmp_path), "--no-progress", "--deterministic")  # the seeded schedule: updates after the warm-up however loaded the machine
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "rlnb: preset apex-dqn-MinAtar-Breakout-v1 (" in proc.stderr, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["preset"] == "apex-dqn-MinAtar-Breakout-v1" and out["updates"] > 0, out
    from rlnb.agent.agent import read_checkpoint
    cfg = read_checkpoint(out["checkpoint"], replay=False)["state"]["config"]
    assert (cfg["replay_ratio"], cfg["buffer_warmup"]) == (0.25, 100), cfg  # the preset's pace, the flag's warm-up


def test_output_cut_short_by_its_reader_is_no_traceback():
    "`rlnb presets | head -1`: the reader closes the pipe early; rlnb stops quietly."
    proc = subprocess.Popen([RLNB, "presets"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert first.startswith("preset") and "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.slow
def test_train_resume_and_record_atari(tmp_path):
    "`rlnb train apex-dqn --env ALE/Pong-v5` trains on the DQN preprocessing with frame replay, written beside its checkpoint; --resume continues the replay; `rlnb eval --video` records the game in colour."
    pytest.importorskip("ale_py", reason="the atari extra is not installed")
    from rlnb.agent.agent import read_checkpoint
    common = ("--num-actors", "2", "--envs-per-actor", "2", "--actor-mode", "process", "--replay-ratio", "0.02", "--updates-per-dispatch", "1",
              "--buffer-warmup", "400", "--buffer-capacity", "8000", "--eval-episodes", "1", "--eval-interval", "100000", "--no-progress")
    proc = run("train", "apex-dqn", "--env", "ALE/Pong-v5", "--steps", "1200", "--out", str(tmp_path), *common, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["updates"] > 0 and -21 <= out["eval_return"] <= 21, out
    ckpt = pathlib.Path(out["checkpoint"])
    (replay,) = ckpt.parent.glob(ckpt.stem + ".replay-0-*")
    frames = max(replay.glob("*.npy"), key=lambda f: f.stat().st_size)
    assert frames.stat().st_size >= out["env_steps"] * 84 * 84  # a frame per env step, in its own file
    buf = read_checkpoint(ckpt)["state"]["pacing"]["buffer"]
    assert buf["kind"] == "PrioritizedFrameReplayBuffer" and int(buf["count"].sum()) >= out["env_steps"]
    proc = run("train", "apex-dqn", "--env", "ALE/Pong-v5", "--resume", str(tmp_path), "--steps", "1600", *common, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    again = json.loads(proc.stdout.strip().splitlines()[-1])
    assert again["env_steps"] >= 1600
    assert int(read_checkpoint(again["checkpoint"])["state"]["pacing"]["buffer"]["count"].sum()) >= again["env_steps"]  # the replay went on
    proc = run("eval", str(tmp_path), "--episodes", "1", "--video", str(tmp_path / "pong.mp4"), timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ev = json.loads(proc.stdout.strip().splitlines()[-1])
    import imageio.v3 as iio
    video = iio.imread(tmp_path / "pong.mp4")
    assert video.shape == (ev["video_frames"], 210, 160, 3)


@pytest.mark.slow
def test_sigterm_stops_every_run_of_many_with_a_checkpoint(tmp_path):
    "`rlnb train --seeds`: SIGTERM ends every run with a checkpoint of that moment, writes results.json (every run 'stopped'), exits 143, and `--resume` is named."
    out = tmp_path / "many"
    p = subprocess.Popen([RLNB, "train", "ppo", "--env", "CartPole-v1", "--seeds", "0-1", "--out", str(out), "--no-progress", "--devices", "1",
                          "--num-actors", "2", "--save-interval", "1000", "--eval-interval", "100000", "--target-return", "none", "--steps", "10000000"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ckpts = lambda i: sorted((out / f"run-{i}" / "checkpoints").glob("ckpt-*.msgpack"))
    try:
        _wait_for(lambda: all(ckpts(i) for i in (0, 1)), 300, p)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)  # a bound that catches a hang, not a speed claim
        assert p.returncode == 143, (p.returncode, err[-3000:])
        assert "every run stopped with a checkpoint" in err and f"--resume {out}" in err, err[-3000:]
        res = json.loads((out / "results.json").read_text())
        from rlnb.agent.agent import read_checkpoint
        for r in res["runs"]:
            assert r["status"] == "stopped" and r["env_steps"] < 10_000_000, r
            assert read_checkpoint(r["checkpoint"])["env_steps"] == r["env_steps"]  # the checkpoint of the moment it stopped
    finally:
        if p.poll() is None:
            p.kill()


def test_flags_are_field_names_with_their_old_names_as_aliases():
    "Issue 54 item 4: a flag is its field's name (--num-train-steps, --work-dir, --num-eval-episodes); the old names still parse."
    import contextlib
    import io
    import pytest
    from rlnb.cli import _parser, main
    p = _parser()
    for cmd in (["train", "ppo"], ["tune", "ppo"]):
        for new, old, dest, v in (("--num-train-steps", "--steps", "steps", "1200"), ("--work-dir", "--out", "out", "runs/x"),
                                  ("--num-eval-episodes", "--eval-episodes", "eval_episodes", "3")):
            assert getattr(p.parse_args(cmd + [new, v]), dest) == getattr(p.parse_args(cmd + [old, v]), dest) == (
                v if dest == "out" else int(v)), (cmd, new, old)
    assert p.parse_args(["eval", "r", "--num-eval-episodes", "4"]).episodes == p.parse_args(["eval", "r", "--episodes", "4"]).episodes == 4
    for argv, names in ((["train", "ppo", "--help"], ("--num-train-steps N, --steps N", "--work-dir DIR, --out DIR",
                                                      "--num-eval-episodes N, --eval-episodes N")),
                        (["tune", "--help"], ("--num-train-steps N, --steps N", "--work-dir DIR, --out DIR")),
                        (["eval", "--help"], ("--num-eval-episodes N, --episodes N",))):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            main(argv)
        text = " ".join(out.getvalue().split())  # argparse wraps to the terminal's width
        assert all(n in text for n in names), (argv, out.getvalue())


def _help_of(*argv):
    "The help page `rlnb ARGV --help` prints, in-process, with argparse's wrapping undone."
    import contextlib
    import io
    import pytest
    from rlnb.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue(), " ".join(out.getvalue().split())


def test_main_help_lists_commands_one_line_each_and_the_common_options():
    "Issue 60 trap 8: `rlnb --help` lists each command on one line and the common options of `rlnb train ALGO`, each a real flag."
    import re
    from rlnb.cli import _parser
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    for cmd in ("smoke", "train", "presets", "tune", "eval"):
        [line] = [l for l in lines if l.split()[:1] == [cmd]]
        assert len(line.split()) > 2, line  # its help on the same line
    assert "`rlnb train ALGO --help`" in proc.stdout and "`rlnb COMMAND --help`" in proc.stdout
    common = proc.stdout.split("common options of `rlnb train ALGO`")[1]
    flags = re.findall(r"^  (--[a-z-]+)", common, re.M)
    assert {"--env", "--num-train-steps", "--seed", "--preset", "--work-dir", "--resume"} <= set(flags), flags
    train_ppo = {s for a in _parser()._subparsers._group_actions[0].choices["train"]._subparsers._group_actions[0].choices["ppo"]._actions
                 for s in a.option_strings}
    assert set(flags) <= train_ppo, set(flags) - train_ppo
    for kind in ("ALE/", "MinAtar/", "gymnax:", "brax:", "jumanji:"):
        assert kind in common, kind


def test_train_help_in_groups_with_the_env_id_kinds():
    "`rlnb train ppo --help` groups its flags (common, evaluations and logs, algorithm, network, envs, runtime); --env names every kind of id."
    raw, text = _help_of("train", "ppo")
    for title in ("common options:", "evaluations, checkpoints and logs:", "algorithm (PPOConfig):", "network (PPOConfig):",
                  "envs and the actors that step them (RuntimeConfig):", "runtime: learner, queues, devices (RuntimeConfig):"):
        assert title in raw, title
    assert raw.index("common options:") < raw.index("  --env ENV") < raw.index("algorithm (PPOConfig):") < raw.index("  --gamma FLOAT")
    assert raw.index("network (PPOConfig):") < raw.index("  --hidden N")
    assert "--gamma FLOAT discount factor (default: 0.98)" in text
    for kind in ("ALE/Pong-v5", "MinAtar/Breakout-v1", "gymnax:CartPole-v1", "brax:ant", "jumanji:Snake-v1"):
        assert kind in text and kind in " ".join(_help_of("tune")[1].split()), kind


def test_train_help_with_env_shows_the_preset_values():
    "`rlnb train ppo --env LunarLander-v3 --help` shows the values the run takes from its preset (gamma 0.999, not 0.98)."
    _, text = _help_of("train", "ppo", "--env", "LunarLander-v3")
    assert "--gamma FLOAT discount factor (default: 0.999 from the preset)" in text, text
    assert "preset ppo-LunarLander-v3" in text and "(default: 1000000 from the preset)" in text
    assert "--clip-eps FLOAT epsilon, the clip range of the probability ratio (default: 0.2)" in text  # not in the preset
    assert "(default: 0.999" not in _help_of("train", "ppo", "--env", "LunarLander-v3", "--preset", "none")[1]


def test_help_imports_no_jax():
    "The help pages answer without importing JAX (about 2.5 s of imports on a quiet machine)."
    code = ("import sys, contextlib, io\nfrom rlnb.cli import main\n"
            "for argv in (['--help'], ['train', 'ppo', '--help'], ['train', 'ppo', '--env', 'LunarLander-v3', '--help'], ['tune', '--help']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try: main(argv)\n"
            "        except SystemExit: pass\n"
            "print(sorted(m for m in ('jax', 'flax', 'optax', 'gymnasium') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_presets_imports_no_jax():
    "Issue 60 trap 8: `rlnb presets` (the console script, as a user runs it) imports no JAX: PYTHONPROFILEIMPORTTIME lists every module it imported."
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    for argv in (["presets"], ["presets", "ppo-CartPole-v1"]):
        proc = subprocess.run([RLNB, *argv], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "ppo-CartPole-v1" in proc.stdout or 'algo = "ppo"' in proc.stdout, proc.stdout
        imported = {l.rsplit("|", 1)[1].strip() for l in proc.stderr.splitlines() if l.startswith("import time:")}
        assert {"rlnb.cli", "rlnb.agent.presets"} <= imported, sorted(imported)[:20]  # the list is read: this check can fail
        heavy = sorted(m for m in imported if m.split(".")[0] in ("jax", "jaxlib", "flax", "optax", "chex"))
        assert not heavy, (argv, heavy[:10])


def test_cli_defaults_are_the_python_api_defaults(monkeypatch):
    "Issue 60 trap 5: `rlnb train` logs as often as `DistributedAgent.train` (LOG_INTERVAL) and stops at the target the agent names (`default_target`): the values that reach the run."
    import inspect
    import pytest
    import rlnb.cli as cli
    from rlnb.agent.agent import DistributedAgent
    from rlnb.agent.presets import default_target, resolve_preset
    from rlnb.agent.rows import LOG_INTERVAL
    from rlnb.cli_fields import run_defaults
    assert inspect.signature(DistributedAgent.atrain).parameters["log_interval"].default == LOG_INTERVAL == run_defaults()["log_interval"]  # `train` is its plain form
    assert f"seconds between log lines (default: {LOG_INTERVAL:g}, as in Python)" in _help_of("train", "ppo")[1]

    class Taken(Exception): pass
    one = inspect.signature(cli._train_one)
    def taken(*a, **kw): raise Taken(one.bind(*a, **kw).arguments)
    monkeypatch.setattr(cli, "_train_one", taken)  # the run as the command line sets it up, not trained
    targets = set()
    for algo, env in (("ppo", "LunarLander-v3"), ("apex-dqn", "MountainCar-v0"), ("sac", "Pendulum-v1"), ("ppo", "Acrobot-v1")):
        with pytest.raises(Taken) as e: cli.main(["train", algo, "--env", env, "--no-progress"])
        run = e.value.args[0]
        assert run["log_interval"] == LOG_INTERVAL, (algo, env, run["log_interval"])
        assert run["target_return"] == default_target(resolve_preset("auto", algo, env), env), (algo, env, run["target_return"])
        targets.add(run["target_return"])
    assert len(targets) > 1 and None not in targets, targets  # each env its own target
    with pytest.raises(Taken) as e: cli.main(["train", "ppo", "--env", "CartPole-v1", "--log-interval", "2", "--target-return", "none"])
    assert (e.value.args[0]["log_interval"], e.value.args[0]["target_return"]) == (2.0, float("inf"))


def test_help_table_in_step_with_the_configs():
    "The stored table of config fields (rlnb/cli_fields.json) that help reads is the one the configs give now."
    from rlnb.cli_fields import REGENERATE, TABLE_PATH, cli_table
    stored = json.loads(TABLE_PATH.read_text())
    assert stored == cli_table(), f"{TABLE_PATH} is out of step with the configs; regenerate it: {REGENERATE}"


def test_exit_2_hint_names_the_help_that_lists_the_flag():
    "A usage error points at the help page that lists the option it is about (`rlnb train ppo --help`), not `rlnb --help`."
    proc = run("train", "ppo", "--steps", "-5")
    assert proc.returncode == 2 and "--num-train-steps/--steps must be a positive integer" in proc.stderr, proc.stderr
    assert "(`rlnb train ppo --help` lists the options)" in proc.stderr, proc.stderr
    assert "--num-train-steps" in _help_of("train", "ppo")[1]
    proc = run("train", "ppo", "--gae-lambda", "0.9")
    assert proc.returncode == 2 and "(`rlnb train ppo --help` lists the options)" in proc.stderr, proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("when", ["starting", "saving"])
def test_ctrl_c_three_times_exits_130_without_traceback(tmp_path, when):
    "Ctrl-C pressed three times in quick succession, while JAX is imported and the run set up ('starting'), or once the run saves every 200 steps, the later presses while the stop's checkpoint is written ('saving'): exit 130, a short message, no traceback, the newest complete checkpoint readable."
    p = subprocess.Popen([RLNB, "train", "apex-dqn", "--env", "CartPole-v1", "--out", str(tmp_path), "--no-progress", "--num-actors", "2",
                          "--save-interval", "200", "--eval-interval", "100000", "--target-return", "none"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ckpts = lambda: sorted((tmp_path / "checkpoints").glob("ckpt-*.msgpack"))
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(p.stderr.readline, '')), daemon=True)
    reader.start()
    try:
        if when == "starting":
            time.sleep(3)  # importing JAX, building the run
            for _ in range(3):
                p.send_signal(signal.SIGINT); time.sleep(0.05)
            p.wait(timeout=120)
            reader.join(10)
            err = ''.join(lines)
            assert p.returncode == 130 and "Traceback" not in err and "interrupted" in err, (p.returncode, err[-3000:])
            return
        _wait_for(lambda: len(ckpts()) >= 2, 300, p, lines)  # saving every 200 steps: a save is often under way
        p.send_signal(signal.SIGINT)
        t0 = time.monotonic()  # the first press is taken (the handler's message), then two more at once: the stop's save is being written
        while not any("SIGINT: stopping" in l for l in lines) and p.poll() is None and time.monotonic() - t0 < 60:
            time.sleep(0.002)
        for _ in range(2):
            if p.poll() is None: p.send_signal(signal.SIGINT)
            time.sleep(0.01)
        p.wait(timeout=120)
        reader.join(10)
        err = ''.join(lines)
        assert p.returncode == 130, (p.returncode, err[-3000:])
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
        assert "interrupted" in err, err[-3000:]
    finally:
        if p.poll() is None:
            p.kill()
    from rlnb.agent.agent import read_checkpoint
    assert read_checkpoint(ckpts()[-1])["env_steps"] > 0  # the newest complete checkpoint survived


def test_steer_changes_a_running_training(tmp_path):
    """`rlnb steer RUN_DIR --learning-rate 0` from another process changes a running `rlnb train`: the answer names the
    update it took effect from, the run logs it in steering.jsonl and metrics.csv; a non-steerable field is refused with
    the steerable ones listed; once the training has ended, steering it says that none runs there."""
    p = subprocess.Popen([RLNB, "train", "ppo", "--env", "CartPole-v1", "--out", str(tmp_path), "--no-progress", "--target-return", "none",
                          "--devices", "1", "--eval-interval", "100000", "--log-interval", "0.2"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(iter(p.stderr.readline, '')), daemon=True)
    reader.start()
    try:
        _wait_for(lambda: _logged_steps(tmp_path) > 0 and (tmp_path / "training.json").exists(), 600, p, lines)
        proc = run("steer", str(tmp_path), "--learning-rate", "0", timeout=120)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert out["values"] == {"learning_rate": 0.0} and out["env_steps"] > 0, out
        bad = run("steer", str(tmp_path), "--gamma", "0.9", timeout=120)
        assert bad.returncode == 2 and "'gamma' is not steerable; the steerable fields are clip_eps, entropy_coef, learning_rate, value_coef" in bad.stderr, bad.stderr
        _wait_for(lambda: _logged_steps(tmp_path) > out["env_steps"], 600, p, lines)  # a row after the change
        p.send_signal(signal.SIGINT)
        p.wait(timeout=300)
    finally:
        if p.poll() is None: p.kill()
    log = [json.loads(l) for l in (tmp_path / "steering.jsonl").read_text().splitlines()]
    assert [r["values"] for r in log] == [{"learning_rate": 0.0}] and log[0]["updates"] == out["updates"]
    rows = (tmp_path / "metrics.csv").read_text().splitlines()
    header, last = rows[0].split(","), rows[-1].split(",")
    assert float(last[header.index("learning_rate")]) == 0.0
    assert not (tmp_path / "training.json").exists()
    gone = run("steer", str(tmp_path), "--learning-rate", "1e-4", timeout=120)
    assert gone.returncode == 2 and "no training is running" in gone.stderr, gone.stderr
