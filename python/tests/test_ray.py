"""ggpnet.ray on a local Ray cluster started here (2 CPUs, no dashboard):
flat Monte-Carlo split into seeded tasks gives the same totals as the same
tasks run in this process (and as the reports of ``game.playouts`` added up
by hand), from the initial state and a later one, with a fixed evaluator and
with ``"auto"``; perft split over the first joint moves gives the counts of
``game.perft``, on the propnet and the interpreter; ``map_games`` loads each
game in a task, a broken one giving ``Failed``. Skipped with a notice without
Ray (``pip install ray``), failed under ``GGPNET_REQUIRE_EXTRAS=1``."""

import os
import signal

import pytest

import ggpnet
from conftest import REPO, require_module

ray = require_module("ray", "ray")
import ggpnet.ray as gray  # noqa: E402

# Seconds starting the cluster, or any gathering of results, may take (a
# bound against a hang, not a measurement).
TIMEOUT = 300


def bounded(seconds, what, call):
    """`call()`, or TimeoutError once it has run `seconds`."""

    def expire(signum, frame):
        raise TimeoutError(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module", autouse=True)
def cluster(tmp_path_factory):
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray puts the driver's directory first on its workers' path: started
    # from python/, they would import the source package (without its
    # extension) rather than the installed one.
    before = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("ray"))
    try:
        bounded(TIMEOUT, "starting a local Ray cluster", start)
    finally:
        os.chdir(before)
    try:
        yield
    finally:
        ray.shutdown()


def start():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 1024 * 1024,
        log_to_driver=False,
        configure_logging=False,
    )


@pytest.fixture(scope="module")
def game():
    return ggpnet.Game.load(ggpnet.DEFAULT_GAME, evaluator="sweep")


def later_state(game, moves=3, seed=11):
    state = game.initial_state()
    for _ in range(moves):
        state = game.next_state(state, game.random_joint_move(state, rng=seed))
    return state


def by_hand(game, state, tasks, playouts, seed):
    """The reports of the same runs in this process, added up here."""
    reports = [game.playouts(state, playouts=playouts, threads=1, seed=seed + i) for i in range(tasks)]
    return {
        "runs": tasks,
        "playouts": sum(r.playouts for r in reports),
        "abandoned": sum(r.abandoned for r in reports),
        "at_depth_limit": sum(r.at_depth_limit for r in reports),
        "transitions": sum(r.transitions for r in reports),
        "states": sum(r.states for r in reports),
        "depth_sum": sum(r.depth_sum for r in reports),
        "goal_sums": [sum(g) for g in zip(*(r.goal_sums for r in reports))],
        "missing_goals": [sum(m) for m in zip(*(r.missing_goals for r in reports))],
    }


@pytest.mark.parametrize("start", ["initial", "later"])
def test_playouts_on_the_cluster_equal_the_same_tasks_here(game, start):
    state = game.initial_state() if start == "initial" else later_state(game)
    spread = gray.playouts(game, state, tasks=4, playouts=150, seed=7, timeout=TIMEOUT)
    here = gray.playouts(game, state, tasks=4, playouts=150, seed=7, local=True)
    assert spread.counts() == here.counts() == by_hand(game, state, 4, 150, 7)
    assert spread.runs == 4 and spread.playouts + spread.abandoned >= 600
    assert spread.avg_goals == here.avg_goals
    assert sum(spread.avg_goals) == pytest.approx(100.0)
    # PlayoutTotals adds reports too.
    added = gray.PlayoutTotals(roles=game.roles)
    for i in range(4):
        added.add(game.playouts(state, playouts=150, threads=1, seed=7 + i))
    assert added.counts() == here.counts()
    # Other seeds, other playouts.
    other = gray.playouts(game, state, tasks=4, playouts=150, seed=8, local=True)
    assert other.counts() != here.counts()


def test_an_auto_evaluator_is_fixed_for_every_task():
    game = ggpnet.Game.load(ggpnet.DEFAULT_GAME)
    spread = gray.playouts(game, tasks=2, playouts=100, seed=3, timeout=TIMEOUT)
    here = gray.playouts(game, tasks=2, playouts=100, seed=3, local=True)
    assert spread.counts() == here.counts()


@pytest.mark.parametrize("engine", ["propnet", "interpreter"])
def test_perft_split_over_first_moves_sums_to_the_whole(engine):
    game = ggpnet.Game.load(REPO / "games" / "tic_tac_toe.kif", engine=engine)
    depth = 4 if engine == "propnet" else 3
    assert gray.perft(game, depth, timeout=TIMEOUT) == game.perft(depth)
    assert gray.perft(game, depth, local=True) == game.perft(depth)
    later = later_state(game, moves=2)
    assert gray.perft(game, 3, state=later, timeout=TIMEOUT) == game.perft(3, state=later)
    assert gray.perft(game, 1) == game.perft(1)


def test_perft_of_connect_four_on_the_cluster():
    game = ggpnet.Game.load(ggpnet.DEFAULT_GAME)
    assert gray.perft(game, 5, evaluator="sweep", timeout=TIMEOUT) == game.perft(5)


def test_map_games_loads_each_game_in_a_task():
    # Defined here, so that Ray sends it by value (a worker cannot import this module).
    def summary(game):
        return (game.roles, game.perft(2))

    sources = [REPO / "games" / "tic_tac_toe.kif", ggpnet.DEFAULT_GAME, "(role r) (init p"]
    spread = gray.map_games(summary, sources, timeout=TIMEOUT)
    assert spread == gray.map_games(summary, sources, local=True)
    assert spread[0] == (["x", "o"], [9, 72])
    assert spread[1] == (["red", "yellow"], [7, 49])
    failed = spread[2]
    assert isinstance(failed, gray.Failed) and failed.kind == "ParseError"
    assert "1:" in failed.message


def test_a_process_compiles_a_runs_game_once(game):
    # The tasks of a run find their game compiled (here, the caller's own).
    shipped = gray._remember(game)
    assert gray._game(shipped) is game
    other = ggpnet.Game.load(ggpnet.DEFAULT_GAME, evaluator="differential")
    assert gray._game(gray._remember(other)) is other
    assert gray._game(shipped) is game
