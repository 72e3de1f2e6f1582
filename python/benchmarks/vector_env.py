"""Steps per second of ggpnet.VectorEnv, for docs/PYTHON.md.

    python python/benchmarks/vector_env.py [--seconds S] [--evaluators lanes,sweep,auto]
        [--threads T] [--sizes 1,64,512,4096] [GAME.kif ...]

Each run steps every lane with random legal actions for about S seconds, in two
ways: actions drawn by the environment inside the step (an action of -1), and
actions drawn by `sample_actions()` and passed in, as an agent would pass its
own. A step of n lanes counts n steps. Prints a Markdown table.
"""

import argparse
import os
import time

import numpy as np

import ggpnet


def rate(env, seconds, sampled):
    """Lane steps per second over about `seconds` of steps."""
    random = np.full((env.num_envs, len(env.game.roles)), -1, dtype=np.int64)
    env.reset(seed=1)
    steps = 0
    start = time.perf_counter()
    while True:
        for _ in range(8):
            env.step(env.sample_actions() if sampled else random)
            steps += env.num_envs
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return steps / elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("games", nargs="*")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--evaluators", default="lanes,sweep")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--sizes", default="1,64,512,4096")
    args = parser.parse_args()
    corpus = os.environ.get("GGPNET_CORPUS", os.path.join(os.path.dirname(__file__), "../../../shared"))
    games = args.games or [
        os.path.join(corpus, "games", name) for name in ("connectFour.kif", "breakthrough.kif", "chess_200.kif")
    ]
    sizes = [int(n) for n in args.sizes.split(",")]
    print("| game | evaluator | threads | " + " | ".join(f"n = {n}" for n in sizes) + " |")
    print("| --- | --- | --- | " + " | ".join("---:" for _ in sizes) + " |")
    for path in games:
        game = ggpnet.Game.load(path, engine="propnet")
        name = os.path.basename(path)
        for evaluator in args.evaluators.split(","):
            for sampled in (False, True):
                cells = []
                threads = None
                for n in sizes:
                    env = ggpnet.VectorEnv(game, n, evaluator=evaluator, threads=args.threads)
                    threads = env.threads
                    cells.append(f"{rate(env, args.seconds, sampled):,.0f}")
                how = "sample_actions" if sampled else "drawn in step"
                print(f"| {name} | {evaluator}, {how} | {threads} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
