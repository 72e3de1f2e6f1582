"""A Python loop over OpenSpiel's connect_four (apply_action on random legal
actions, a new game at each end) against ggpnet.VectorEnv on the built-in
connect four (7x6, the same board) at n = 4096: steps per second of each, in
alternating rounds of S seconds, and the ratio of the medians.

    pip install open_spiel   # not a dependency of ggpnet: only this script uses it
    python python/benchmarks/openspiel_connect_four.py [--seconds S] [--rounds R]
        [--n N] [--evaluator E] [--threads T]
"""

import argparse
import random
import statistics
import time

import numpy as np

import ggpnet


def openspiel_rate(seconds):
    import pyspiel

    game = pyspiel.load_game("connect_four")
    rng = random.Random(0)
    state = game.new_initial_state()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(1000):
            state.apply_action(rng.choice(state.legal_actions()))
            steps += 1
            if state.is_terminal():
                state = game.new_initial_state()
    return steps / (time.perf_counter() - start)


def vector_env_rate(env, seconds):
    random_actions = np.full((env.num_envs, 2), -1)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(random_actions)
        steps += env.num_envs
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--evaluator", default=None)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    game = ggpnet.Game.load(ggpnet.DEFAULT_GAME)
    env = ggpnet.VectorEnv(game, args.n, seed=0, evaluator=args.evaluator, threads=args.threads)
    spiel, ours = [], []
    for round in range(args.rounds):
        spiel.append(openspiel_rate(args.seconds))
        ours.append(vector_env_rate(env, args.seconds))
        print(f"round {round + 1}: OpenSpiel {spiel[-1]:,.0f}, VectorEnv {ours[-1]:,.0f} steps/s", flush=True)
    spiel, ours = statistics.median(spiel), statistics.median(ours)
    print(f"OpenSpiel connect_four, a Python loop: {spiel:,.0f} steps/s (median)")
    print(
        f"ggpnet.VectorEnv, connect four 7x6, n = {args.n}, {env.evaluator} on {env.threads} threads: "
        f"{ours:,.0f} steps/s (median, {ours / spiel:.1f}x)"
    )


if __name__ == "__main__":
    main()
