"""Flat Monte-Carlo, perft and per-game measurements spread over a Ray cluster
(``pip install ray``).

>>> import ray, ggpnet, ggpnet.ray                                  # doctest: +SKIP
>>> ray.init()                                                       # doctest: +SKIP
>>> game = ggpnet.Game.load(ggpnet.DEFAULT_GAME, evaluator="sweep")  # doctest: +SKIP
>>> ggpnet.ray.playouts(game, tasks=8, playouts=10_000).avg_goals     # doctest: +SKIP

Games and states pickle (a game as its rules and settings: a worker compiles
it again when it unpickles it, once per task), so Ray tasks take them as they
are. This module splits the work, runs the tasks and adds up what they
return; it sends a game's rules and settings once (Ray's object store) and a
state as its facts, and a worker compiles the game once for all the tasks it
runs:

- :func:`playouts`: ``tasks`` runs of ``game.playouts`` with the seeds
  ``seed``, ``seed + 1``, ...; their totals added up (:class:`PlayoutTotals`).
  The same seeds, budget of playouts, threads and evaluator give the same
  totals on any machine: load the game with a fixed ``evaluator`` (with
  ``"auto"``, each worker calibrates and may choose another one; this module
  then fixes the one this process chooses).
- :func:`perft`: perft split over the first joint moves, one task each
  (``game.perft(depth - 1, state=after)``), summed: the counts of
  ``game.perft(depth)``.
- :func:`map_games`: a function applied to every game of a list of files or
  rules, each loaded in its own task (a corpus benchmark, say); a game that
  does not load gives a :class:`Failed` instead of raising.

Every function takes ``local=True`` to run the same tasks one after another
in this process instead (no Ray needed): the one-machine run to compare with.
``ray`` is imported on first use, not with this module; call ``ray.init``
first (or let Ray start a local cluster).
"""

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import Game, PlayoutReport, State

__all__ = ["PlayoutTotals", "Failed", "playouts", "perft", "map_games", "totals"]


def _ray():
    """The ``ray`` module; ImportError naming the package without it."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("ggpnet.ray needs Ray: pip install ray") from e
    return ray


def _run(function, calls, local, num_cpus=1, timeout=None):
    """``function(*args)`` for each ``args`` of ``calls``, in order: one Ray
    task each (``num_cpus`` each, results awaited at most ``timeout``
    seconds), or one after another here when ``local``."""
    if local:
        return [function(*args) for args in calls]
    ray = _ray()
    remote = ray.remote(num_cpus=num_cpus)(function)
    return ray.get([remote.remote(*args) for args in calls], timeout=timeout)


_COUNTS = ("playouts", "abandoned", "at_depth_limit", "transitions", "states", "depth_sum")


def totals(report: PlayoutReport) -> Dict[str, Any]:
    """The totals of `report` (and its seconds) as a dict: what a task sends back."""
    fields = _COUNTS + ("goal_sums", "missing_goals", "seconds")
    return {name: getattr(report, name) for name in fields}


@dataclass
class PlayoutTotals:
    """The totals of several runs of playouts (:class:`ggpnet.PlayoutReport`), added up."""

    roles: List[str]
    runs: int = 0
    """Runs (tasks) added."""
    playouts: int = 0
    """Playouts that reached a terminal state."""
    abandoned: int = 0
    at_depth_limit: int = 0
    transitions: int = 0
    """Joint moves applied."""
    states: int = 0
    depth_sum: int = 0
    goal_sums: List[float] = field(default_factory=list)
    """Per role, the sum of its goals over the finished playouts that gave it one."""
    missing_goals: List[int] = field(default_factory=list)
    """Per role, the finished playouts that gave it no goal."""
    seconds: float = 0.0
    """Seconds the runs took, added up (not wall time: they ran side by side)."""

    def add(self, report: Union[PlayoutReport, Dict[str, Any]]) -> None:
        """Adds the totals of `report` (a PlayoutReport, or its :func:`totals`)."""
        if isinstance(report, PlayoutReport):
            report = totals(report)
        if not self.goal_sums:
            self.goal_sums = [0.0] * len(self.roles)
            self.missing_goals = [0] * len(self.roles)
        self.runs += 1
        for name in _COUNTS:
            setattr(self, name, getattr(self, name) + report[name])
        self.goal_sums = [a + b for a, b in zip(self.goal_sums, report["goal_sums"])]
        self.missing_goals = [a + b for a, b in zip(self.missing_goals, report["missing_goals"])]
        self.seconds += report["seconds"]

    @property
    def avg_goals(self) -> List[Optional[float]]:
        """Per role, its mean goal over the finished playouts that gave it one
        (None when none did)."""
        given = [self.playouts - missing for missing in self.missing_goals]
        return [total / n if n else None for total, n in zip(self.goal_sums, given)]

    def counts(self) -> dict:
        """Every total but the time: equal for runs with the same seeds."""
        return {
            "runs": self.runs,
            "playouts": self.playouts,
            "abandoned": self.abandoned,
            "at_depth_limit": self.at_depth_limit,
            "transitions": self.transitions,
            "states": self.states,
            "depth_sum": self.depth_sum,
            "goal_sums": list(self.goal_sums),
            "missing_goals": list(self.missing_goals),
        }


def _fixed_evaluator(game: Game) -> Game:
    """`game`, or the same game loaded with the evaluator it chose fixed
    when its setting is ``"auto"`` (so every worker runs that one)."""
    settings = dict(game.settings)
    if game.engine != "propnet" or settings.get("evaluator", "auto") != "auto":
        return game
    settings["evaluator"] = game.evaluator
    return Game.load(game.rules, **settings)


# The games this process has compiled for tasks, by rules and settings, the
# last used last: a worker compiles the game of a run's tasks once, not once
# per task (Ray gives a worker process one task after another).
_GAMES: "OrderedDict[Tuple[str, Tuple[Tuple[str, Any], ...]], Game]" = OrderedDict()
_GAMES_KEPT = 4


def _key(rules: str, settings: Dict[str, Any]):
    return (rules, tuple(sorted(settings.items())))


def _remember(game: Game) -> Tuple[str, Dict[str, Any]]:
    """What a task is sent of `game` (its rules and settings), `game` kept
    for the tasks run here."""
    shipped = (game.rules, dict(game.settings))
    _GAMES[_key(*shipped)] = game
    _GAMES.move_to_end(_key(*shipped))
    return shipped


def _game(shipped: Tuple[str, Dict[str, Any]]) -> Game:
    """The game of `shipped` (rules and settings): the one this process has,
    or loaded now."""
    key = _key(*shipped)
    game = _GAMES.pop(key, None)
    if game is None:
        rules, settings = shipped
        game = Game.load(rules, **settings)
    _GAMES[key] = game
    while len(_GAMES) > _GAMES_KEPT:
        _GAMES.popitem(last=False)
    return game


def _ship(value, local):
    """`value` as tasks take it: itself here, else in Ray's object store (sent once)."""
    return value if local else _ray().put(value)


def _playout_task(shipped, facts, playouts, threads, seed):
    """One run of playouts from the state of `facts`: its totals."""
    game = _game(shipped)
    state = game.state_from_kif(facts)
    return totals(game.playouts(state, playouts=playouts, threads=threads, seed=seed))


def playouts(
    game: Game,
    state: Optional[State] = None,
    *,
    tasks: int,
    playouts: int,
    seed: int = 0,
    threads: int = 1,
    local: bool = False,
    timeout: Optional[float] = None,
) -> PlayoutTotals:
    """Flat Monte-Carlo from `state` (the initial state when None) as `tasks`
    runs of at least `playouts` playouts each on `threads` threads, task
    ``i`` seeded ``seed + i``; their totals added up. ``timeout``: seconds
    to wait for the tasks (None: no limit)."""
    if tasks < 1:
        raise ValueError(f"tasks must be at least 1, not {tasks}")
    game = _fixed_evaluator(game)
    start = game.initial_state() if state is None else state
    shipped = _ship(_remember(game), local)
    calls = [(shipped, start.facts(), playouts, threads, seed + i) for i in range(tasks)]
    totals = PlayoutTotals(roles=list(game.roles))
    for report in _run(_playout_task, calls, local, num_cpus=threads, timeout=timeout):
        totals.add(report)
    return totals


def _perft_task(shipped, facts, depth, evaluator):
    game = _game(shipped)
    return game.perft(depth, evaluator, state=game.state_from_kif(facts))


def perft(
    game: Game,
    depth: int,
    *,
    state: Optional[State] = None,
    evaluator: str = "differential",
    local: bool = False,
    timeout: Optional[float] = None,
) -> List[int]:
    """``game.perft(depth, evaluator, state=state)`` with one task per first
    joint move: the counts from each successor, one shorter, summed."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, not {depth}")
    start = game.initial_state() if state is None else state
    if game.is_terminal(start):
        return [0] * depth
    successors = [after for _, after in game.successors(start)]
    counts = [len(successors)] + [0] * (depth - 1)
    if depth == 1:
        return counts
    shipped = _ship(_remember(game), local)
    calls = [(shipped, after.facts(), depth - 1, evaluator) for after in successors]
    for below in _run(_perft_task, calls, local, timeout=timeout):
        for d, n in enumerate(below, start=1):
            counts[d] += n
    return counts


@dataclass(frozen=True)
class Failed:
    """A game of :func:`map_games` that did not load, or whose function raised a ggpnet error."""

    source: str
    kind: str
    """The exception's class name (``ParseError``, ``LimitError``, ...)."""
    message: str


def _absolute(source):
    """`source` with a path made absolute (Ray workers may run elsewhere than
    this process's directory); the rules' text as it is."""
    if isinstance(source, os.PathLike) or (
        isinstance(source, str) and not any(c in source for c in "(\n") and "<<" not in source
    ):
        return os.path.abspath(source)
    return source


def _map_task(function, source, load):
    import ggpnet

    try:
        return function(Game.load(source, **load))
    except ggpnet.Error as e:
        return Failed(str(source), type(e).__name__, str(e))


def map_games(
    function: Callable[[Game], Any],
    sources: Sequence[Any],
    *,
    local: bool = False,
    num_cpus: int = 1,
    timeout: Optional[float] = None,
    **load: Any,
) -> List[Any]:
    """``function(Game.load(source, **load))`` for every source (a path or
    the rules' text), one task each with `num_cpus` CPUs, in the order of
    `sources`; a :class:`Failed` for a game that raises a ggpnet error.
    Paths are made absolute here: on a cluster, they must exist on every node."""
    calls = [(function, _absolute(source), load) for source in sources]
    return _run(_map_task, calls, local, num_cpus=num_cpus, timeout=timeout)
