"""A Python loop over OpenSpiel's connect_four (apply_action on random legal
actions, a new game at each end) against ggpnet.VectorEnv on the built-in
connect four (7x6, the same board) at n = 4096: steps per second of each.

    pip install open_spiel   # not a dependency of ggpnet: only this script uses it
    python python/benchmarks/openspiel_connect_four.py [--seconds S]
"""

import argparse
import random
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


def vector_env_rate(seconds, n):
    env = ggpnet.VectorEnv(ggpnet.Game.load(ggpnet.DEFAULT_GAME), n, seed=0)
    random_actions = np.full((n, 2), -1)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.step(random_actions)
        steps += n
    return steps / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--n", type=int, default=4096)
    args = parser.parse_args()
    spiel = openspiel_rate(args.seconds)
    ours = vector_env_rate(args.seconds, args.n)
    print(f"OpenSpiel connect_four, a Python loop: {spiel:,.0f} steps/s")
    print(f"ggpnet.VectorEnv, connect four 7x6, n = {args.n}: {ours:,.0f} steps/s ({ours / spiel:.1f}x)")


if __name__ == "__main__":
    main()
