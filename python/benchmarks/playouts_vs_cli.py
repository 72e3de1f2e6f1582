"""Game.playouts from Python against `ggpnet mc` on the same game, evaluator and threads.

    python python/benchmarks/playouts_vs_cli.py [--seconds S] [--threads T] [--repeats R]
        [--ggpnet target/release/ggpnet] [GAME.kif ...]

Runs the command (`ggpnet mc GAME --threads T --seconds S --evaluator E --json`) and
`game.playouts(seconds=S, threads=T)` alternately, R times each, with the evaluator
the command's calibration picks fixed for both, and prints the medians' ratio.
"""

import argparse
import json
import os
import statistics
import subprocess

import ggpnet


def cli_rate(binary, path, evaluator, threads, seconds):
    command = [binary, "mc", path, "--threads", str(threads), "--seconds", str(seconds), "--json"]
    if evaluator:
        command += ["--evaluator", evaluator]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    return report["transitions_per_sec"], report.get("evaluator")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("games", nargs="*")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ggpnet", default="target/release/ggpnet")
    args = parser.parse_args()
    corpus = os.environ.get("GGPNET_CORPUS", os.path.join(os.path.dirname(__file__), "../../../shared"))
    games = args.games or [os.path.join(corpus, "games", n) for n in ("connectFour.kif", "breakthrough.kif", "chess_200.kif")]
    print("| game | evaluator | threads | `ggpnet mc` transitions/s | `game.playouts` transitions/s | ratio |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for path in games:
        _, evaluator = cli_rate(args.ggpnet, path, None, args.threads, 1.0)
        game = ggpnet.Game.load(path, evaluator=evaluator)
        cli, py = [], []
        for _ in range(args.repeats):
            cli.append(cli_rate(args.ggpnet, path, evaluator, args.threads, args.seconds)[0])
            py.append(game.playouts(seconds=args.seconds, threads=args.threads).transitions_per_sec)
        c, p = statistics.median(cli), statistics.median(py)
        name = os.path.basename(path)
        print(f"| {name} | {evaluator} | {args.threads} | {c:,.0f} | {p:,.0f} | {p / c:.2f} |", flush=True)


if __name__ == "__main__":
    main()
