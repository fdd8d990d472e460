"""The device bench of issue 31: what a GPU buys on one host, GPU visible against hidden, same run, one JSON.

    python bench/accelerator.py [--quick] [--budget-s 450] [--sections cartpole,learner,pong,placement]
                                [--seeds 0,1,2] [--pong-seconds 15] [--pong-learning SECONDS]

On a fresh device machine (no network; what it lacks travels in .whl/, filled here by `python bench/device_wheels.py`:
gymnasium, ale-py, tensorboardX and EnvPool's needs as wheels, EnvPool itself cut to Atari in .whl/ep/):

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      && export PYTHONPATH=/tmp/site:$PWD/.whl/ep:$PWD PYTHONUNBUFFERED=1 && python3 bench/accelerator.py

Every condition runs in a child process of its own: `visible` sees the default backend (the GPU where there is one),
`hidden` runs with CUDA_VISIBLE_DEVICES= and JAX_PLATFORMS=cpu. Ratios are `visible / hidden` of the same run.
Sections, in the order they run (a section whose estimate no longer fits `--budget-s` is skipped with a note; the JSON
is rewritten after every condition, so it always exists):
- `cartpole`: the README's main job (`rlnb train apex-dqn --env CartPole-v1`) and `rlnb train ppo --env CartPole-v1`, each
  with its preset's config: bench/apex_cartpole.py's protocol (evaluate 10 episodes every 5,000 env steps, stop at the
  first mean >= 475; `train_s` = wall-clock minus evaluation, compile counted, imports not). The seeds of a condition run
  one after the other in its child, with `jax.clear_caches()` before each, so every seed compiles afresh.
- `learner`: bench/learner.py (--devices 1 --batches 256,1024,4096 --reps 3 --updates 1000 --fed apex-dqn,sac,td3,impala,ppo)
  with the default backend: the data-parallel wrapper against the bare jitted update, and each algorithm's learner fed
  from its replay or queue against the bare jitted update of its own step (`--learner-fed ALGOS|''`, `--learner-fed-batches`,
  `--learner-fed-k K`: K updates fused per dispatch for Ape-X, SAC and TD3, as Ape-X's default of 32 does; `--learner-fed-env ENV`:
  every fed learner on ENV, e.g. ALE/Pong-v5 for the Atari CNN).
- `pong`: Ape-X, IMPALA and PPO on ALE/Pong-v5, `--pong-actors` process actors (default: half the cores) of `--pong-envs`
  envs, Atari hyperparameters (below; a shipped preset for the pair wins): env steps/s and learner updates/s over a
  window of `--pong-seconds` that starts once compiled and the learner has updated; metrics named *wait*/*idle* are
  copied when the runtime reports them.
- `placement`: only where `RuntimeConfig` has `actor_device`: the cartpole conditions, GPU visible, with actor_device
  'host' and 'learner' (with the learner where `learner_device` puts it), `gpu_learner` (learner_device='devices': the learner
  on the GPU, the actors where 'auto' puts them), `gpu_all` (learner and actors on the GPU) and `cpu_learner` (learner and
  actors on the host CPU while the GPU is visible) (`--placements`),
  with what 'auto' picked where the runtime says; else `{"skipped": "no actor_device"}`.
- `pong_sweep` (only with `--pong-sweep JSON`): `--learning-algo` on Pong in each given layout (config fields over its
  preset), GPU visible or hidden, over a `--pong-seconds` window; `"profile": true` adds a stack sampler's report (where the
  main thread and the env threads spend the window, and what the loop's tasks await while it idles); `"whole_ticks": true`
  makes every actor wait for the others (the A/B of ready ticks); `--learning-from-sweep` hands the fastest visible case
  marked `"learn"` to `pong_learning`.
- `pong_learning` (only with `--pong-learning SECONDS`): PPO (`--learning-algo`) on Pong, GPU visible, for that many
  seconds of training (or until a 10-episode evaluation mean >= 18), with its learning curve (training returns and
  evaluations against env steps and wall time). Alone: `--sections pong_learning --pong-learning 300 --budget-s 420`.
  `--learning-overrides JSON` replaces the `pong` section's layout with config fields over the shipped preset (whose
  `actor_mode='auto'` steps the envs through EnvPool where it is installed).
`--quick` shrinks everything (1 seed, short CartPole budgets, tiny Pong configs and windows) for a dry run on a CPU.
`--plot-learning JSON` draws a JSON's `pong_learning` curve into a PNG beside it (and runs nothing else).
Output: `$OUT/accelerator.json` when OUT is set, else bench/results/accelerator[_quick].json (or `--out`); printed at the end.
"""
import argparse
import asyncio
import datetime
import hashlib
import importlib.metadata
import json
import os
import pathlib
import signal
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
try: from _harness import provenance  # command, commit, machine, date: what every bench JSON starts with
except ImportError: provenance = None
EVAL_EVERY, EVAL_EPISODES, TARGET = 5_000, 10, 475.0
PONG = 'ALE/Pong-v5'
HIDDEN = {'CUDA_VISIBLE_DEVICES': '', 'JAX_PLATFORMS': 'cpu'}
# Atari hyperparameters (DQN/Rainbow-like replay ratio, IMPALA's and PPO's papers); a shipped preset for (algo, Pong) wins.
ATARI = {'apex-dqn': dict(replay_ratio=0.25, learning_rate=1e-4, target_update_interval=2_000, buffer_warmup=5_000),
         'impala': dict(unroll_length=20, batch_size=32, learning_rate=6e-4, entropy_coef=0.01),
         'ppo': dict(unroll_length=128, batch_size=1024, num_epochs=4, learning_rate=2.5e-4, gamma=0.99, lambda_=0.95,
                     clip_eps=0.1, entropy_coef=0.01)}
ATARI_QUICK = {'apex-dqn': dict(buffer_warmup=200, buffer_capacity=5_000, updates_per_dispatch=4, actor_slack=8),
               'impala': dict(unroll_length=20, batch_size=2), 'ppo': dict(unroll_length=32, batch_size=32, num_epochs=1)}


# ---------------------------------------------------------------------------------------------------------- children
def make_agent(algo, env, overrides, learner=None):
    "The algorithm as `rlnb train` builds it: the shipped preset's config (if any), then `overrides`; `learner='cpu'` puts the learner on the host CPU."
    import jax
    from rlnb.agent.presets import resolve_preset
    from rlnb.runtime.runtime import Runtime, get_algo
    pre = resolve_preset('auto', algo, env)
    devices = jax.devices('cpu')[:1] if learner == 'cpu' else None
    return Runtime(env, algorithm=get_algo(algo), devices=devices, **{**(pre.config if pre else {}), **overrides}), pre


def picked_placement(agent):
    "Where the runtime placed the actors' policy and why (`actors.actor_device`, `actors.device_reason`), where it says so."
    actors = getattr(agent, 'actors', None)  # the runtime's actors part (an rlnb from before the parts kept these on the runtime)
    dev = getattr(actors, 'actor_device', None) if actors is not None else getattr(agent, 'actor_device', None)
    why = getattr(actors, 'device_reason', None) if actors is not None else getattr(agent, 'actor_device_reason', None)
    return None if dev is None else dict(device=str(dev), reason=why)


def child_cartpole(spec):
    import jax
    out = []
    for seed in spec['seeds']:
        jax.clear_caches()  # every seed compiles afresh, as in a fresh process
        t0 = time.perf_counter()
        agent, pre = make_agent(spec['algo'], 'CartPole-v1', dict(spec['overrides'], seed=seed), spec.get('learner'))
        try:
            res = agent.train(spec['max_steps'], eval_interval=spec['eval_every'], num_eval_episodes=EVAL_EPISODES, target_return=TARGET)
            wall = time.perf_counter() - t0
            out.append(dict(seed=seed, solved=res['eval']['mean'] >= TARGET, train_s=wall - agent.eval_seconds, wall_s=wall,
                            env_steps=res['env_steps'], updates=res['updates'], final_eval=res['eval']['mean'],
                            placement=picked_placement(agent)))
        finally: agent.close()
    return dict(devices=[str(d) for d in jax.local_devices()], preset=pre.name if pre else None, runs=out)


class _Done(Exception): pass


class StackSampler:
    "A sampling profiler of this process's threads (sys._current_frames every `every` s): where the main thread (the event loop) and the env threads spend a window."
    def __init__(self, every=1e-3, loop=None):
        import collections, threading
        self.loop = loop  # the event loop whose tasks' await points are sampled while it idles
        self.every, self.stop, self.n = every, threading.Event(), collections.Counter()
        self.by = collections.defaultdict(collections.Counter)  # (thread, view) -> frame -> samples
        self.thread = threading.Thread(target=self._run, name='stack-sampler', daemon=True)

    def _run(self):
        import threading
        me = threading.get_ident()
        while not self.stop.wait(self.every):
            names = {t.ident: t.name for t in threading.enumerate()}
            for ident, f in sys._current_frames().items():
                if ident == me: continue
                stack = []
                while f is not None and len(stack) < 60:
                    stack.append((f.f_code.co_filename, f.f_code.co_name)); f = f.f_back
                name = 'main' if ident == threading.main_thread().ident else names.get(ident, '?').split('-')[0]
                self.n[name] += 1
                short = lambda fr: f"{pathlib.Path(fr[0]).name}:{fr[1]}"
                self.by[name, 'leaf'][short(stack[0])] += 1
                ours = next((fr for fr in stack if f"{os.sep}rlnb{os.sep}" in fr[0]), None)
                self.by[name, 'rlnb'][short(ours) if ours else '(none)'] += 1
                self.by[name, 'stack3'][' < '.join(short(fr) for fr in stack[:3])] += 1
                if name == 'main' and self.loop is not None and stack[0][1] == 'select':  # the loop is idle: what each task awaits
                    for task in list(asyncio.all_tasks(self.loop)):
                        c, where = task.get_coro(), None
                        while c is not None:
                            fr = getattr(c, 'cr_frame', None) or getattr(c, 'gi_frame', None)
                            if fr is not None and f"{os.sep}rlnb{os.sep}" in fr.f_code.co_filename:
                                where = f"{pathlib.Path(fr.f_code.co_filename).name}:{fr.f_code.co_name}:{fr.f_lineno}"
                            c = getattr(c, 'cr_await', None) or getattr(c, 'gi_yieldfrom', None)
                        self.by['main', 'idle_awaits'][f"{task.get_name()} @ {where}"] += 1

    def __enter__(self):
        self._switch = sys.getswitchinterval(); sys.setswitchinterval(self.every / 2); self.thread.start(); return self

    def __exit__(self, *exc):
        self.stop.set(); self.thread.join(); sys.setswitchinterval(self._switch)

    def report(self, top=15):
        "Per thread kind (main, and the env worker threads by name prefix): samples and the top frames' shares."
        out = {}
        for (name, view), c in sorted(self.by.items()):
            out.setdefault(name, dict(samples=self.n[name]))[view] = {k: round(v / self.n[name], 3) for k, v in c.most_common(top)}
        return out


def child_pong(spec):
    "Throughput over a wall-clock window that opens once everything is compiled and the learner has run an update."
    import jax
    t0 = time.perf_counter()
    agent, pre = make_agent(spec['algo'], PONG, spec['overrides'])
    if spec.get('whole_ticks'): agent.actors.in_flight = agent.actors._nothing_in_flight(ready=False)  # the A/B of ready ticks: every actor waited for
    setup_s = time.perf_counter() - t0
    mark = {}
    def cb(rt):
        now = time.perf_counter()
        if 'start' not in mark:
            if rt.updates == 0 and now - mark.setdefault('first', now) < spec['max_warmup_s']: return
            mark['start'] = (now, rt.env_steps, rt.updates)
            if spec.get('profile'): mark['sampler'] = StackSampler(every=2e-3, loop=asyncio.get_running_loop()).__enter__()
        elif now - mark['start'][0] >= spec['seconds']:
            mark['end'] = (now, rt.env_steps, rt.updates)
            if 'sampler' in mark: mark['sampler'].__exit__()
            raise _Done
    try:
        t1 = time.perf_counter()
        agent.compile()
        compile_s = time.perf_counter() - t1
        try: agent.train(10**9, eval_interval=None, final_eval=False, callback=cb)
        except _Done: pass
        (ta, sa, ua), (tb, sb, ub) = mark['start'], mark['end']
        m = agent.metrics()
        waits = {k: v for k, v in m.items() if any(w in k for w in ('wait', 'idle', 'starv'))}
        return dict(devices=[str(d) for d in jax.local_devices()], preset=pre.name if pre else None, setup_s=setup_s,
                    compile_s=compile_s, window_s=tb - ta, env_steps_per_s=(sb - sa) / (tb - ta),
                    updates_per_s=(ub - ua) / (tb - ta), learner_started=ua > 0, env_steps=sb, updates=ub,
                    lag_mean=m.get('lag_mean'), placement=picked_placement(agent), ready_ticks=agent.actors.in_flight is not None, **waits,
                    **(dict(profile=mark['sampler'].report()) if 'sampler' in mark else {}))
    finally:
        if 'sampler' in mark and not mark['sampler'].stop.is_set(): mark['sampler'].__exit__()
        agent.close()


def child_learning(spec):
    "PPO (or `algo`) on Pong for `seconds` of training (evaluation excluded), or until an evaluation mean >= 18."
    import jax
    t0 = time.perf_counter()
    agent, pre = make_agent(spec['algo'], PONG, spec['overrides'])
    curve, evals, last = [], [], [0.0]
    def cb(rt):
        now = time.perf_counter()
        train_s = now - t0 - rt.eval_seconds
        if len(rt.eval_history) > len(evals):
            evals.append(dict(env_steps=rt.eval_history[-1][0], mean=rt.eval_history[-1][1], wall_s=now - t0, train_s=train_s))
        if now - last[0] >= spec['every_s']:
            last[0] = now
            curve.append(dict(wall_s=now - t0, train_s=train_s, env_steps=rt.env_steps, updates=rt.updates,
                              train_return=rt.stats.mean('G')))
        if train_s >= spec['seconds']: raise _Done
    try:
        try: agent.train(10**10, eval_interval=spec['eval_every'], num_eval_episodes=EVAL_EPISODES, target_return=18.0, callback=cb)
        except _Done:  # the time is up: one last evaluation of the params reached
            train_s = time.perf_counter() - t0 - agent.eval_seconds
            evals.append(dict(env_steps=agent.env_steps, train_s=train_s, **agent.evaluate(EVAL_EPISODES), wall_s=time.perf_counter() - t0))
        hit = next((e for e in evals if e['mean'] >= 18.0), None)
        return dict(devices=[str(d) for d in jax.local_devices()], preset=pre.name if pre else None, reached_18=hit is not None,
                    actor_mode=getattr(agent.config, 'actor_mode', None), placement=picked_placement(agent),
                    train_s_to_18=hit and hit.get('train_s'), wall_s_to_18=hit and hit['wall_s'], evals=evals, curve=curve)
    finally: agent.close()


# ---------------------------------------------------------------------------------------------------------- parent
class Bench:
    def __init__(self, args, path):
        self.args, self.path, self.t0 = args, path, time.perf_counter()
        prov = provenance(sys.argv) if provenance else dict(command=' '.join(sys.argv))
        self.out = dict(prov, commit=prov.get('commit') or git_commit(), rlnb_sha256=tree_hash(),
                        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
                        software=software(), budget_s=args.budget_s, quick=args.quick, skipped=[])

    def left(self): return self.args.budget_s - (time.perf_counter() - self.t0)

    def fits(self, what, need):
        if self.left() >= need: return True
        self.out['skipped'].append(f"{what}: needs ~{need:.0f} s, {max(self.left(), 0):.0f} s of the budget left")
        self.save(); return False

    def save(self):
        self.out['elapsed_s'] = round(time.perf_counter() - self.t0, 1)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.out, indent=1, default=str))

    def child(self, spec, env, label):
        "Run one condition in a child of its own (its own process group, killed whole at the budget's end)."
        t = time.perf_counter()
        e = {**os.environ, 'PYTHONUNBUFFERED': '1', **env}
        p = subprocess.Popen([sys.executable, __file__, '--child', json.dumps(spec)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=e, cwd=ROOT, start_new_session=True)
        try: so, se = p.communicate(timeout=max(self.left(), 5))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL); so, se = p.communicate()
            se += f"\n(killed: the budget ran out after {time.perf_counter() - t:.0f} s)"
        line = [l for l in so.splitlines() if l.startswith('RESULT ')]
        r = json.loads(line[-1][7:]) if line else dict(error=se[-3000:])
        r['child_wall_s'] = round(time.perf_counter() - t, 1)
        print(f"[{time.perf_counter() - self.t0:6.1f} s] {label}: " + json.dumps(r, default=str)[:400], file=sys.stderr, flush=True)
        return r


def median_of(runs, key):
    vals = [r[key] if r.get('solved') else float('inf') for r in runs]
    return statistics.median(vals) if vals else None


def cartpole_condition(b, algo, env, overrides, label, learner=None):
    a = b.args
    spec = dict(kind='cartpole', algo=algo, seeds=a.seeds, overrides=overrides, max_steps=a.cartpole_steps, eval_every=a.eval_every, learner=learner)
    r = b.child(spec, env, label)
    runs = r.get('runs', [])
    r.update(solved=f"{sum(x['solved'] for x in runs)}/{len(runs)}", median_train_s=median_of(runs, 'train_s'),
             median_env_steps=median_of(runs, 'env_steps'),  # and env steps per training second, solved or not (less noisy)
             median_steps_per_s=statistics.median([x['env_steps'] / x['train_s'] for x in runs]) if runs else None)
    return r


def ratio(x, y):
    return x / y if isinstance(x, (int, float)) and isinstance(y, (int, float)) and y not in (0, float('inf')) else None


def section_cartpole(b):
    res = b.out['cartpole'] = {}
    for algo in ('apex-dqn', 'ppo'):
        for cond, env in (('visible', {}), ('hidden', HIDDEN)):
            if not b.fits(f"cartpole {algo} {cond}", b.args.cartpole_need): continue
            res.setdefault(algo, {})[cond] = cartpole_condition(b, algo, env, {}, f"cartpole {algo} {cond}")
            b.save()
        c = res.get(algo, {})
        if 'visible' in c and 'hidden' in c:
            c['visible_over_hidden'] = ratio(c['visible']['median_train_s'], c['hidden']['median_train_s'])
            c['steps_per_s_visible_over_hidden'] = ratio(c['visible']['median_steps_per_s'], c['hidden']['median_steps_per_s'])
        b.save()


PLACEMENTS = {  # condition: (config overrides, learner placement for make_agent)
    'host': (dict(actor_device='host'), None), 'learner': (dict(actor_device='learner'), None),
    'gpu_learner': (dict(learner_device='devices'), None), 'gpu_all': (dict(learner_device='devices', actor_device='learner'), None),
    'cpu_learner': (dict(), 'cpu')}


def section_placement(b):
    import dataclasses
    from rlnb.runtime.runtime import RuntimeConfig
    if 'actor_device' not in {f.name for f in dataclasses.fields(RuntimeConfig)}:
        b.out['placement'] = dict(skipped='no actor_device'); b.save(); return
    res = b.out['placement'] = {}
    for algo in ('apex-dqn', 'ppo'):
        for where in b.args.placements.split(','):
            if not b.fits(f"placement {algo} {where}", b.args.cartpole_need): continue
            o, learner = PLACEMENTS[where]
            res.setdefault(algo, {})[where] = cartpole_condition(b, algo, {}, o, f"placement {algo} {where}", learner)
            b.save()
        c, hidden = res.get(algo, {}), b.out.get('cartpole', {}).get(algo, {}).get('hidden', {})
        for where in PLACEMENTS:
            if where in c: c[f"{where}_over_hidden"] = ratio(c[where]['median_train_s'], hidden.get('median_train_s'))
        auto = b.out.get('cartpole', {}).get(algo, {}).get('visible', {}).get('runs', [])
        c['auto_picked'] = auto[0].get('placement') if auto else None
        b.save()


def pong_overrides(b, algo):
    a = b.args
    o = dict(ATARI[algo], num_actors=a.pong_actors, envs_per_actor=a.pong_envs, actor_mode='process')
    if a.quick: o.update(ATARI_QUICK[algo])
    if algo == 'ppo':  # whole minibatches: the rollout (unroll_length * num_envs) must be a multiple of batch_size
        o['batch_size'] = min(o['batch_size'], o['unroll_length'] * a.pong_actors * a.pong_envs)
    return o


def section_pong(b):
    a, res = b.args, b.out.setdefault('pong', {})
    res['layout'] = dict(num_actors=a.pong_actors, envs_per_actor=a.pong_envs, actor_mode='process', window_s=a.pong_seconds)
    for algo in ('apex-dqn', 'impala', 'ppo'):
        for cond, env in (('visible', {}), ('hidden', HIDDEN)):
            if not b.fits(f"pong {algo} {cond}", a.pong_seconds + a.pong_overhead_s): continue
            spec = dict(kind='pong', algo=algo, overrides=pong_overrides(b, algo), seconds=a.pong_seconds, max_warmup_s=3 * a.pong_seconds)
            r = b.child(spec, env, f"pong {algo} {cond}")
            res.setdefault(algo, dict(config=spec['overrides']))[cond] = r
            b.save()
        c = res.get(algo, {})
        if 'visible' in c and 'hidden' in c:
            c['visible_over_hidden'] = {k: ratio(c['visible'].get(k), c['hidden'].get(k)) for k in ('env_steps_per_s', 'updates_per_s')}
        b.save()


def section_pong_sweep(b):
    "`--pong-sweep`: the learning algorithm on Pong in several layouts (config fields over its preset), each over a `--pong-seconds` window, GPU visible or hidden."
    a, res = b.args, b.out.setdefault('pong_sweep', {})
    for case in json.loads(a.pong_sweep or '[]'):
        label = case['label']
        if not b.fits(f"pong_sweep {label}", a.pong_seconds + a.pong_overhead_s): continue
        spec = dict(kind='pong', algo=a.learning_algo, overrides=case['overrides'], seconds=a.pong_seconds,
                    max_warmup_s=3 * a.pong_seconds + 60, profile=case.get('profile', False), whole_ticks=case.get('whole_ticks', False))
        res[label] = dict(case, **b.child(spec, HIDDEN if case.get('hidden') else {}, f"pong_sweep {label}"))
        b.save()


def fastest_sweep_case(b):
    "The overrides of the visible sweep case marked `learn` with the most env steps/s (None where none ran)."
    cases = [c for c in b.out.get('pong_sweep', {}).values() if c.get('learn') and not c.get('hidden') and c.get('env_steps_per_s')]
    return max(cases, key=lambda c: c['env_steps_per_s']) if cases else None


def section_learner(b):
    a = b.args
    cmd = [sys.executable, str(HERE / 'learner.py'), '--devices', '1', '--batches', a.learner_batches, '--reps', str(a.learner_reps),
           '--updates', str(a.learner_updates)]
    if a.learner_fed: cmd += ['--fed', a.learner_fed, '--fed-batches', a.learner_fed_batches, '--fed-k', str(a.learner_fed_k)]
    if a.learner_fed and a.learner_fed_updates: cmd += ['--fed-updates', str(a.learner_fed_updates)]
    if a.learner_fed and a.learner_fed_env: cmd += ['--fed-env', a.learner_fed_env]
    if not b.fits('learner', a.learner_need): return
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=max(b.left(), 5), env={**os.environ, 'PYTHONUNBUFFERED': '1'})
        lines = [l for l in p.stdout.splitlines() if l.startswith('{')]
        r = json.loads(lines[-1]) if lines else dict(error=p.stderr[-3000:])
    except subprocess.TimeoutExpired: r = dict(error='killed: the budget ran out')
    r.update(command=' '.join(cmd[1:]), wall_s=round(time.perf_counter() - t, 1))
    b.out['learner'] = r; b.save()
    print(f"[{time.perf_counter() - b.t0:6.1f} s] learner: " + json.dumps(r)[:400], file=sys.stderr, flush=True)


def section_pong_learning(b):
    a = b.args
    if not a.pong_learning: b.out['pong_learning'] = dict(skipped='off (--pong-learning SECONDS)'); return
    if not b.fits('pong_learning', a.pong_learning + 90): return
    o = json.loads(a.learning_overrides) if a.learning_overrides else pong_overrides(b, a.learning_algo)
    if a.learning_from_sweep and (best := fastest_sweep_case(b)):
        o = best['overrides']; b.out['pong_learning_from'] = best['label']
    spec = dict(kind='learning', algo=a.learning_algo, overrides=o, seconds=a.pong_learning, every_s=2.0, eval_every=a.learning_eval_every)
    b.out['pong_learning'] = dict(config=o, **b.child(spec, {}, 'pong_learning')); b.save()


def git_commit():
    "HEAD, else $RLNB_COMMIT (a device machine gets the working tree without .git)."
    try: return subprocess.run(['git', 'rev-parse', 'HEAD'], capture_output=True, text=True, cwd=ROOT, timeout=10).stdout.strip() or os.environ.get('RLNB_COMMIT')
    except OSError: return os.environ.get('RLNB_COMMIT')


def tree_hash():
    "sha256 over rlnb/*.py and this script: names the code where no git is at hand."
    h = hashlib.sha256()
    for f in sorted((ROOT / 'rlnb').glob('*.py')) + [pathlib.Path(__file__)]: h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def software():
    "Versions and the GPU, without touching the GPU from this process (the children need its memory)."
    m = dict(cpu_count=os.cpu_count(), python=sys.version.split()[0])
    for pkg in ('jax', 'jaxlib', 'jax-cuda13-plugin', 'jax-cuda12-plugin', 'flax', 'optax', 'gymnasium', 'ale-py', 'numpy'):
        try: m[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError: pass
    try: m['gpu'] = subprocess.run(['nvidia-smi', '--query-gpu=name,driver_version,memory.total', '--format=csv,noheader'],
                                   capture_output=True, text=True, timeout=20).stdout.strip() or None
    except Exception: m['gpu'] = None
    return m


def plot_learning(path):
    "Draw a JSON's `pong_learning` curve (training return, evaluations) against training seconds and env steps, as a PNG beside it."
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    path = pathlib.Path(path)
    d = json.loads(path.read_text())['pong_learning']
    curve = [c for c in d['curve'] if c['train_return'] == c['train_return']]  # NaN before the first episode ends
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    for ax, key, label in ((axes[0], 'train_s', 'training seconds (evaluation excluded)'), (axes[1], 'env_steps', 'env steps')):
        ax.plot([c[key] for c in curve], [c['train_return'] for c in curve], label='training episodes (recent mean)')
        ax.plot([e[key] for e in d['evals']], [e['mean'] for e in d['evals']], 'o-', label='evaluation (10 episodes)')
        ax.axhline(18, ls='--', c='grey', lw=0.8); ax.set_xlabel(label); ax.grid(alpha=0.3)
    axes[0].set_ylabel('Pong return'); axes[0].legend(loc='upper left', fontsize=8)
    fig.suptitle(f"{d.get('preset')} ({d.get('actor_mode')}), {d.get('devices')}: {json.dumps(d.get('config'))}", fontsize=8)
    fig.tight_layout()
    out = path.with_suffix('.png'); fig.savefig(out, dpi=90); print(f"written to {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--quick', action='store_true', help='a dry run on a CPU: 1 seed, tiny budgets and windows')
    ap.add_argument('--budget-s', type=float, default=450)
    ap.add_argument('--sections', default='cartpole,learner,pong,placement')
    ap.add_argument('--placements', default='gpu_learner,gpu_all', help="placement conditions, GPU visible: " + ', '.join(PLACEMENTS))
    ap.add_argument('--learner-fed', default='apex-dqn,sac,td3,impala,ppo', help="algorithms whose fed learner the learner section measures ('': none)")
    ap.add_argument('--learner-fed-k', type=int, default=1, help='updates fused per dispatch of the fed Ape-X/SAC/TD3 learner')
    ap.add_argument('--learner-fed-updates', type=int, default=None, help='dispatches per repetition of the fed learner (default: the learner updates)')
    ap.add_argument('--learner-fed-env', default=None, help="one env for the fed learners (e.g. ALE/Pong-v5: the Atari CNN's update; default: bench/learner.py's CartPole and Pendulum)")
    ap.add_argument('--learner-fed-batches', default=None, help='batches of the fed learner (default: the learner batches; --quick: 64)')
    ap.add_argument('--seeds', default=None, help='CartPole seeds (default 0,1,2; --quick: 0)')
    ap.add_argument('--pong-seconds', type=float, default=None, help='throughput window per Pong condition (default 15; --quick: 4)')
    ap.add_argument('--pong-actors', type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument('--pong-envs', type=int, default=None, help='envs per Pong actor (default 4; --quick: 2)')
    ap.add_argument('--pong-learning', type=float, default=0, help='seconds of PPO training on Pong, with its learning curve (0: off)')
    ap.add_argument('--learning-algo', default='ppo', choices=sorted(ATARI))
    ap.add_argument('--learning-overrides', default=None, help="JSON of config fields over the shipped preset for Pong learning "
                    "(default: the `pong` section's layout and Atari settings)")
    ap.add_argument('--pong-sweep', default=None, help='JSON list of {"label", "overrides", "hidden", "profile", "learn", "whole_ticks"}: '
                    '`--learning-algo` on Pong per layout over a `--pong-seconds` window (section pong_sweep; profile: where the threads spend it)')
    ap.add_argument('--learning-from-sweep', action='store_true', help="Pong learning takes the overrides of the fastest visible sweep case marked learn")
    ap.add_argument('--learning-eval-every', type=int, default=None, help='env steps between evaluations (default 250,000; --quick: 2,000)')
    ap.add_argument('--out', default=None)
    ap.add_argument('--child', default=None, help=argparse.SUPPRESS)
    ap.add_argument('--plot-learning', default=None, metavar='JSON', help="only draw that JSON's pong_learning curve as a PNG beside it")
    a = ap.parse_args()
    if a.plot_learning: plot_learning(a.plot_learning); return
    if a.child:
        spec = json.loads(a.child)
        r = dict(cartpole=child_cartpole, pong=child_pong, learning=child_learning)[spec['kind']](spec)
        print('RESULT ' + json.dumps(r, default=float), flush=True); return
    q = a.quick
    a.seeds = [int(s) for s in (a.seeds or ('0' if q else '0,1,2')).split(',')]
    a.pong_seconds = a.pong_seconds or (4 if q else 15)
    a.pong_envs = a.pong_envs or (2 if q else 4)
    a.learning_eval_every = a.learning_eval_every or (2_000 if q else 250_000)
    a.cartpole_steps, a.eval_every = (20_000 if q else 100_000), EVAL_EVERY
    a.cartpole_need = (15 if q else 12) * len(a.seeds) + 10  # seconds a CartPole condition is expected to take at most
    a.pong_overhead_s = 40 if q else 30  # a Pong child's start, actor processes, compile and close
    a.learner_batches, a.learner_reps, a.learner_updates = ('256', 1, 100) if q else ('256,1024,4096', 3, 1000)
    a.learner_fed_batches = a.learner_fed_batches or ('64' if q else a.learner_batches)
    if q and a.learner_fed == ap.get_default('learner_fed'): a.learner_fed = 'apex-dqn,ppo'
    fed_cases = len([x for x in a.learner_fed.split(',') if x]) * len(a.learner_fed_batches.split(','))
    a.learner_need = (25 if q else 40) + (20 if q else 12) * fed_cases  # the wrapper's cases, then each fed (algorithm, batch): build, fill, 4 cases
    out = pathlib.Path(a.out or (pathlib.Path(os.environ['OUT']) / 'accelerator.json' if os.environ.get('OUT')
                                 else HERE / 'results' / ('accelerator_quick.json' if q else 'accelerator.json')))
    b = Bench(a, out)
    sections = dict(cartpole=section_cartpole, learner=section_learner, pong=section_pong, placement=section_placement,
                    pong_learning=section_pong_learning, pong_sweep=section_pong_sweep)
    names = a.sections.split(',') + (['pong_learning'] if a.pong_learning and 'pong_learning' not in a.sections else [])
    for name in names: sections[name](b)
    b.save()
    print(json.dumps(b.out, indent=1, default=str))
    print(f"written to {out}", file=sys.stderr)


if __name__ == '__main__':
    main()
