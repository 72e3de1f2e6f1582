#!/usr/bin/env python3
"""Side-by-side flat-MC rates of two ggpnet binaries: alternating runs of
`ggpnet mc --threads 1 --json` per game and evaluator, the order swapped every
round; prints the median transitions/s of each and their ratio, per wall second
and per CPU second of the process (the latter is less sensitive to other load).

    scripts/ab-mc.py OLD NEW GAMES EVALUATORS ROUNDS SECONDS [CORPUS]

GAMES and EVALUATORS are comma-separated: games by name in CORPUS/games
(default ../shared), or paths ending in .kif; `-` as EVALUATORS runs each
binary's default. An rtGDL game counts its events (updates). Binaries from
before issue 27 report `nodes` (transitions plus playouts); their transitions
are taken as nodes - playouts.
"""
import json
import resource
import statistics
import subprocess
import sys


def run(binary, game, evaluator, seconds):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    chosen = [] if evaluator == "-" else ["--evaluator", evaluator]
    out = subprocess.run(
        [binary, "mc", game, "--threads", "1", *chosen, "--seconds", seconds, "--json"],
        capture_output=True, text=True, check=True,
    ).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = json.loads(out)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if "transitions" in report:
        transitions = report["transitions"]
    elif "events" in report:
        transitions = report["events"]
    else:
        transitions = report["nodes"] - report["playouts"]
    return transitions / report["seconds"], transitions / cpu


def main():
    if len(sys.argv) not in (7, 8):
        sys.exit(__doc__)
    old, new, games, evaluators, rounds, seconds = sys.argv[1:7]
    corpus = sys.argv[7] if len(sys.argv) == 8 else "../shared"
    rates = {}
    for r in range(int(rounds)):
        for game in games.split(","):
            for evaluator in evaluators.split(","):
                order = [("old", old), ("new", new)]
                for name, binary in order if r % 2 == 0 else reversed(order):
                    path = game if game.endswith(".kif") else f"{corpus}/games/{game}.kif"
                    rate = run(binary, path, evaluator, seconds)
                    rates.setdefault((game, evaluator, name), []).append(rate)
    print("| game | evaluator | old /s | new /s | new/old (wall) | new/old (CPU) |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for game in games.split(","):
        for evaluator in evaluators.split(","):
            o, n = rates[(game, evaluator, "old")], rates[(game, evaluator, "new")]
            wall = [statistics.median(x[0] for x in v) for v in (o, n)]
            cpu = [statistics.median(x[1] for x in v) for v in (o, n)]
            print(f"| {game} | {evaluator} | {wall[0]:,.0f} | {wall[1]:,.0f} | "
                  f"{wall[1] / wall[0]:.3f} | {cpu[1] / cpu[0]:.3f} |")


if __name__ == "__main__":
    main()
